"""An Explanation as Python users read it: pandas DataFrames, a matplotlib
heat map, and an HTML table for notebooks. pandas and matplotlib are
imported only when asked for."""

import html
import math
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._input import TIME

if TYPE_CHECKING:
    from ._explanation import Explanation, Feature

#: The columns of to_dataframe("features"), in order: a feature's fields.
FEATURE_COLUMNS = (
    "name", "index", "important", "score", "p_value", "p_adjusted", "window_start", "window_end",
    "window_score", "window_p_value", "window_p_adjusted", "window_significant", "ordering_p_value",
    "ordering_p_adjusted", "ordering_important", "window_ordering_p_value", "window_ordering_important", "tested",
    "windows",
)


#: The columns of test outcomes: None (shown as pandas' NA) where nothing
#: was tested, i.e. for a method without tests.
OUTCOME_COLUMNS = ("important", "window_significant", "ordering_important", "window_ordering_important")


def outcomes_nullable(df: Any) -> Any:
    """df with each outcome column that holds None (not tested) as pandas'
    nullable boolean dtype, NA where nothing was tested."""
    for c in OUTCOME_COLUMNS:
        if c in df.columns and df[c].isna().any():
            df[c] = df[c].astype("boolean")
    return df


def _window_list(f: "Feature") -> str:
    """A feature's windows as the program's CSV writes them: "start-end"
    separated by ";", "*" after each significant one and "o" after each
    whose ordering matters (e.g. "2-5*;14-17*o")."""
    return ";".join("%d-%d%s%s" % (w.window[0], w.window[1], "*" if w.significant else "",
                                   "o" if w.ordering_important else "") for w in f.windows)


def _boxes(f: "Feature") -> List[Tuple[Tuple[int, int], bool]]:
    """The windows to box on the plot, each with whether it is significant:
    every window, or the single window of an explanation without the list."""
    if f.windows:
        return [(w.window, w.significant) for w in f.windows]
    if f.window is not None:
        return [(f.window, bool(f.window_significant))]
    return []


def _feature_row(f: "Feature") -> List[Any]:
    w = f.window
    return [f.name, f.index, f.important, f.score, f.p_value, f.p_adjusted,
            None if w is None else w[0], None if w is None else w[1], f.window_score, f.window_p_value,
            f.window_p_adjusted, f.window_significant, f.ordering_p_value, f.ordering_p_adjusted,
            f.ordering_important, f.window_ordering_p_value, f.window_ordering_important, f.tested, _window_list(f)]


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError("to_dataframe needs pandas (apt-get install python3-pandas, or pip install pandas)") from None
    return pandas


def to_dataframe(e: "Explanation", kind: str = "features") -> Any:
    """The explanation as a pandas DataFrame; see Explanation.to_dataframe."""
    pd = _pandas()
    if kind == "features":
        rows = [_feature_row(f) for f in e.features]
        df = pd.DataFrame(rows, columns=list(FEATURE_COLUMNS)).set_index("name")
        df["window_start"] = df["window_start"].astype("Int64")
        df["window_end"] = df["window_end"].astype("Int64")
        outcomes_nullable(df)
        if e.missing_rate is not None and len(e.missing_rate) == len(e.features):
            df.insert(len(df.columns) - 1, "missing_rate", e.missing_rate)
        return df
    if kind == "groups":
        rows = [_feature_row(g) for g in e.groups]
        df = pd.DataFrame(rows, columns=list(FEATURE_COLUMNS)).set_index("name")
        df.insert(1, "members", [[e.features[m].name for m in g.members] for g in e.groups])
        return outcomes_nullable(df.drop(columns=["index"]))
    if kind == "cells":
        return cells_frame(e, e.cells, e.features)
    raise ValueError("kind must be 'features', 'cells', 'groups' or 'attributions', got %r" % (kind,))


def cells_frame(e: "Explanation", cells: "npt.NDArray[np.float64]", features: Sequence["Feature"]) -> Any:
    """The cells frame of cells (features × timesteps) and their features'
    results: one row per (feature, timestep)."""
    pd = _pandas()
    d, l = cells.shape
    names = [f.name for f in e.features]
    index = pd.MultiIndex.from_product([names, range(l)], names=["feature", "timestep"])
    df = pd.DataFrame({"score": cells.reshape(-1)}, index=index)
    inwin = np.zeros((d, l), dtype=bool)
    for j, f in enumerate(features):
        if f.window is not None:
            inwin[j, f.window[0]:f.window[1] + 1] = True
    df["in_window"] = inwin.reshape(-1)
    important = [f.important for f in features]
    if any(v is None for v in important):  # not tested: NA
        df["important"] = pd.array(np.repeat(np.array(important, dtype=object), l), dtype="boolean")
    else:
        df["important"] = np.repeat(np.array(important, dtype=bool), l)
    if e.alignment == "end":
        # End-aligned time: timestep L-1 is every sequence's last step.
        df["steps_before_end"] = np.tile(np.arange(l - 1, -1, -1), d)
    if e.observed is not None and e.observed.shape == (d, l):
        df["observed"] = e.observed.reshape(-1)
    if e.times is not None and len(e.times) == l:
        df[TIME] = e.times * d  # the name of a long DataFrame's time column
    return df


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plot needs matplotlib (apt-get install python3-matplotlib, or pip install matplotlib)") \
            from None
    return plt


def _shown(features: Sequence["Feature"], n: Optional[int]) -> List[int]:
    """The positions of the features to show: all, or the n most important
    (the important ones first, then by score), in index order."""
    order = list(range(len(features)))
    if n is None:
        return order
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError("features must be a positive int (how many features to show), got %r" % (n,))
    order = sorted(order, key=lambda j: (not features[j].important, -abs(features[j].score), j))
    return sorted(order[:int(n)])


def plot(e: "Explanation", ax: Any = None, features: Optional[int] = None, cmap: str = "viridis",
         output: Optional[Union[int, str]] = None, view: Optional[str] = None) -> Any:
    """The heat map of the cell scores (of one output of several, with
    output=); see Explanation.plot. _display_outputs.plot draws the
    overview of several outputs."""
    plt = _pyplot()
    if view is not None:
        raise ValueError("view= applies to the overview of a model with several outputs, without output=; got "
                         "view=%r" % (view,))
    feats: Sequence["Feature"] = e.features
    cells, title = e.cells, "%s: importance per feature and timestep" % e.method
    if output is not None:
        if e.outputs is None:
            raise ValueError("output=%r: the explanation is of a model with one output" % (output,))
        o = e.outputs[output]
        where = "" if o.anchor is None else ", anchored at timestep %d" % o.anchor
        cells, feats = o.cells, o.features
        title = "%s: output %s (%s)%s: importance per feature and timestep" % (e.method, o.name, e.outputs.kind, where)
    return heat_map(e, plt, ax, cells, feats, title, features, cmap)


def heat_map(e: "Explanation", plt: Any, ax: Any, all_cells: "npt.NDArray[np.float64]",
             feats: Sequence["Feature"], title: str, features: Optional[int], cmap: str) -> Any:
    """Draw cells (features × timesteps) with the features' windows boxed."""
    from matplotlib.patches import Rectangle
    order = _shown(feats, features)
    cells = all_cells[order]
    new_figure = ax is None
    if ax is None:
        height = max(2.0, min(12.0, 0.35 * len(order) + 1.2))
        _, ax = plt.subplots(figsize=(max(5.0, min(14.0, 0.25 * e.num_timesteps + 3)), height))
    im = ax.imshow(cells, aspect="auto", interpolation="nearest", cmap=cmap,
                   extent=(-0.5, e.num_timesteps - 0.5, len(order) - 0.5, -0.5))
    ax.figure.colorbar(im, ax=ax, label="importance score")
    labels = []
    for row, j in enumerate(order):
        f = feats[j]
        mark = ""
        if f.important:
            mark = " *"
            if f.ordering_important:
                mark += " o"
        labels.append(f.name + mark)
        for (start, end), significant in _boxes(f):
            ax.add_patch(Rectangle((start - 0.5, row - 0.5), end - start + 1, 1, fill=False, edgecolor="red",
                                   linewidth=2 if significant else 1, linestyle="-" if significant else ":"))
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(labels)
    time_axis(e, ax)
    ax.set_ylabel("feature")
    if any(f.window is not None for f in feats):
        title += "\n* important (FDR), o ordering matters; boxes: windows (solid: significant)"
    ax.set_title(title, fontsize=10)
    if new_figure:
        ax.figure.tight_layout()  # the two-line title and the axis label inside the figure
    return ax


def time_axis(e: "Explanation", ax: Any) -> None:
    """Label ax's x axis with the explanation's timesteps: a DataFrame's
    time values, or 0-based timesteps (end-aligned or not)."""
    if e.times is not None and len(e.times) == e.num_timesteps:
        # A DataFrame's own time values label the timesteps.
        step = max(1, -(-e.num_timesteps // 12))
        ticks = list(range(0, e.num_timesteps, step))
        if e.alignment == "end":  # counted from the end, so the last step is labelled
            ticks = list(range(e.num_timesteps - 1, -1, -step))[::-1]
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(e.times[t]) for t in ticks])
        ax.set_xlabel("time (X's time values%s)" % (", end-aligned" if e.alignment == "end" else ""))
    elif e.alignment == "end":
        ax.set_xlabel("timestep (0-based, end-aligned: %d is every sequence's last step)" % (e.num_timesteps - 1))
    else:
        ax.set_xlabel("timestep (0-based)")


def _fmt(v: Any) -> str:
    if v is None:  # a test outcome where nothing was tested
        return "untested"
    if isinstance(v, bool):
        return "yes" if v else ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return "%.4g" % v
    return html.escape(str(v))


def repr_html(e: "Explanation", limit: int = 30) -> str:
    """A notebook's HTML view: a heading line and the feature table
    (important features first, then by score), at most limit rows (for a
    model with several outputs, the whole model's: _display_outputs adds
    the outputs' table)."""
    # The method table says whether the method tests; an explanation read
    # from JSON without the program does not know, and shows its tests
    # when it has p-values.
    tests = e.tests if e.tests is not None else any(not math.isnan(f.p_value) for f in e.features)
    order = sorted(e.features, key=lambda f: (not f.important, -abs(f.score), f.index))
    if tests:
        head = ["feature", "score", "p", "p (BH)", "important", "window", "window significant", "ordering",
                "window ordering"]
    else:
        head = ["feature", "score"]
    rows = []
    for f in order[:limit]:
        cells = [html.escape(f.name), _fmt(f.score)]
        if tests:
            w = _html_windows(f, e.times if e.times is not None and len(e.times) == e.num_timesteps else None)
            cells += [_fmt(f.p_value), _fmt(f.p_adjusted), _fmt(f.important), w, _fmt(f.window_significant),
                      _fmt(f.ordering_important), _fmt(f.window_ordering_important)]
        rows.append("<tr>%s</tr>" % "".join("<td>%s</td>" % c for c in cells))
    more = ""
    if len(order) > limit:
        more = "<p>&hellip; %d more features (to_dataframe() has them all)</p>" % (len(order) - limit)
    a = e.accounting
    summary = ("<p><b>%s</b>: %d features &times; %d timesteps%s%s; important%s: %s; %d model calls, %d instance "
               "evaluations, %.1f s</p>" % (
                   html.escape(e.method), e.num_features, e.num_timesteps,
                   " (end-aligned)" if e.alignment == "end" else "",
                   "" if e.outputs is None else ", %d %s" % (len(e.outputs), html.escape(e.outputs.kind)),
                   "" if e.outputs is None else " to the whole model",
                   html.escape(", ".join(e.important)) if tests else "not tested (scores only)", a.model_calls,
                   a.instance_evaluations, a.runtime_seconds))
    # A warning repeated (one per output of a model with several) is shown once, with its count.
    counts: Dict[str, int] = {}
    for w in e.warnings:
        counts[w] = counts.get(w, 0) + 1
    warn = "".join("<p>warning: %s%s</p>" % (html.escape(w), " (&times;%d)" % n if n > 1 else "")
                   for w, n in counts.items())
    missing = _missing_summary(e)
    if missing:
        summary += "<p>%s</p>" % html.escape(missing)
    g = e.diagnostics
    if g is not None:
        summary += "<p>model's mean loss %s (a constant prediction's %s)%s</p>" % (
            _fmt(g.baseline_loss), _fmt(g.constant_loss),
            "; an importance of about %s is found half the time" % _fmt(g.detectable_effect)
            if g.detectable_effect > 0 else "")
    table = "<table><thead><tr>%s</tr></thead><tbody>%s</tbody></table>" % (
        "".join("<th>%s</th>" % h for h in head), "".join(rows))
    return "<div>" + summary + warn + table + more + "</div>"


def _html_windows(f: "Feature", times: Optional[Sequence[Any]]) -> str:
    """A feature's windows for the HTML table: every window (not only the
    lead one), "*" after a significant one and "(order matters)" after one
    whose ordering test is significant, with its times when the data has
    them."""
    ws = [(w.window, w.significant, w.ordering_important) for w in f.windows]
    if not ws and f.window is not None:
        ws = [(f.window, bool(f.window_significant), bool(f.window_ordering_important))]
    parts = []
    for (a, b), sig, ordered in ws:
        s = "%d&ndash;%d" % (a, b)
        if times is not None:
            s += " (time %s to %s)" % (html.escape(str(times[a])), html.escape(str(times[b])))
        s += "*" if sig else ""
        s += " (order matters)" if ordered else ""
        parts.append(s)
    return "; ".join(parts)


def _missing_summary(e: "Explanation") -> str:
    """One line on the data's missing values (lengths and each feature's
    missing rate), or "" for complete data."""
    if e.lengths is None or e.missing_rate is None or len(e.missing_rate) != e.num_features:
        return ""
    n = np.sort(e.lengths)
    short = int((n < e.num_timesteps).sum())
    rates = ", ".join("%s %.1f%%" % (f.name, 100 * r) for f, r in zip(e.features, e.missing_rate))
    # The words of the program's report (tempora explain), on one line.
    return ("missing values (alignment %s): %d of %d instances shorter than %d timesteps; lengths min %d, median %d, "
            "max %d; missing (share of each feature's cells within the instances' lengths that are NaN): %s"
            % (e.alignment, short, len(n), e.num_timesteps, n[0], n[len(n) // 2], n[-1], rates))
