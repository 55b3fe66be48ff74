"""An explanation of a model with several outputs as Python users read it:
DataFrames with an output column, the features × outputs overview and the
windows of each output (in lags from the output's anchor where it has
one), and the notebook's HTML. Everything shown is read from the
program's results (Explanation.outputs); nothing is recomputed."""

import html
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _display

if TYPE_CHECKING:
    from ._explanation import Explanation, Feature, OutputResult, OutputResults

#: The output of the whole model's rows (its loss over all outputs), which
#: come before the outputs' own: empty, as in the program's CSV (and as an
#: explanation's output is empty for the whole model).
WHOLE = ""

#: The columns a frame of several outputs adds to a feature's, as the
#: program's CSV has them: the window in lags (after window_end), every
#: window in lags (after windows) and the causal check (last); empty (NA)
#: for the whole model and for outputs without an anchor (classes).
LAG_COLUMNS = ("lag_start", "lag_end")
FUTURE_COLUMNS = ("future_p_value", "future_p_adjusted", "reads_future")

#: The views of plot() for a model with several outputs.
VIEWS = ("outputs", "windows", "cells")


def _blocks(e: "Explanation") -> List[Tuple[str, Optional["OutputResult"]]]:
    """The whole model, then each output: (label, its OutputResult)."""
    outs = _outputs(e)
    return [(WHOLE, None)] + [(o.name, o) for o in outs]


def _outputs(e: "Explanation") -> "OutputResults":
    assert e.outputs is not None
    return e.outputs


def lag_list(f: "Feature") -> str:
    """A feature's windows in lags, as the program's CSV lists them (as
    windows lists them in timesteps): "1-3*;-1--1" (a lag after the
    output's own step is negative)."""
    return ";".join("%d-%d%s" % (w.lag[0], w.lag[1], "*" if w.significant else "") for w in f.windows
                    if w.lag is not None)


def to_dataframe(e: "Explanation", kind: str) -> Any:
    """to_dataframe for a model with several outputs: the whole model's
    rows (output WHOLE), then each output's, with the output first."""
    pd = _display._pandas()
    labels = [label for label, _ in _blocks(e)]
    if kind in ("features", "groups"):
        rows: List[List[Any]] = []
        which: List[str] = []
        for label, o in _blocks(e):
            feats: Sequence["Feature"]
            if kind == "features":
                feats = e.features if o is None else o.features
            else:
                feats = e.groups if o is None else o.groups
            for f in feats:
                lag = f.lag
                rows.append(_display._feature_row(f) + [None if lag is None else lag[0], None if lag is None else lag[1],
                                                        lag_list(f), f.future_p_value, f.future_p_adjusted,
                                                        f.reads_future])
                which.append(label)
        cols = list(_display.FEATURE_COLUMNS) + list(LAG_COLUMNS) + ["lags"] + list(FUTURE_COLUMNS)
        df = pd.DataFrame(rows, columns=cols).set_index("name")
        for c in ("window_start", "window_end") + LAG_COLUMNS:
            df[c] = df[c].astype("Int64")
        df.insert(0, "output", pd.Categorical(which, categories=labels, ordered=True))
        _display.outcomes_nullable(df)
        # The lag columns beside their timestep counterparts.
        order = list(df.columns)
        for c in reversed(LAG_COLUMNS):
            order.remove(c)
            order.insert(order.index("window_end") + 1, c)
        order.remove("lags")
        order.insert(order.index("windows") + 1, "lags")
        df = df[order]
        if kind == "groups":
            members = [[e.features[m].name for m in g.members] for _, o in _blocks(e)
                       for g in (e.groups if o is None else o.groups)]
            df.insert(1, "members", members)
            return df.drop(columns=["index"])
        if e.missing_rate is not None and len(e.missing_rate) == len(e.features):
            df.insert(list(df.columns).index("windows"), "missing_rate", np.tile(e.missing_rate, len(labels)))
        return df
    if kind == "cells":
        parts = []
        for label, o in _blocks(e):
            part = _display.cells_frame(e, e.cells if o is None else o.cells, e.features if o is None else o.features)
            parts.append(pd.concat({label: part}, names=["output"]))
        df = pd.concat(parts)
        return df
    raise ValueError("kind must be 'features', 'cells', 'groups' or 'attributions', got %r" % (kind,))


def plot(e: "Explanation", ax: Any, features: Optional[int], cmap: str, view: Optional[str]) -> Any:
    """The plot of a model with several outputs: the features × outputs
    overview and the windows per output (view None: both, in a new
    figure; returns their Axes), or one view ("outputs", "windows",
    "cells": the whole model's heat map) on ax."""
    plt = _display._pyplot()
    if view is not None and view not in VIEWS:
        raise ValueError("view must be one of %s, got %r" % (", ".join(repr(v) for v in VIEWS), view))
    shown = _display._shown(e.features, features)
    if view == "cells":
        return _display.heat_map(e, plt, ax, e.cells, e.features,
                                 "%s: the whole model, importance per feature and timestep" % e.method, features, cmap)
    if view == "outputs":
        return overview(e, plt, ax, shown, cmap)
    if view == "windows":
        if ax is not None:
            raise ValueError("view='windows' draws one panel per feature in a figure of its own; ax= is for "
                             "view='outputs' or 'cells'")
        return windows(e, plt, None, _windowed(e, shown))
    if ax is not None:
        return overview(e, plt, ax, shown, cmap)
    feats = _windowed(e, shown)
    k = len(_outputs(e))
    top = max(2.0, min(8.0, 0.3 * len(shown) + 1.5))
    bottom = max(2.0, min(10.0, 0.25 * k + 1.5))
    fig = plt.figure(figsize=(max(7.0, min(16.0, max(0.35 * k + 4, 3.2 * len(feats) + 1))), top + bottom),
                     layout="constrained")
    grid = fig.add_gridspec(2, max(1, len(feats)), height_ratios=[top, bottom])
    axes = [overview(e, plt, fig.add_subplot(grid[0, :]), shown, cmap)]
    if feats:
        axes += windows(e, plt, [fig.add_subplot(grid[1, c]) for c in range(len(feats))], feats)
    return axes


def _windowed(e: "Explanation", shown: List[int]) -> List[int]:
    """The shown features that have a window on some output."""
    return [j for j in shown if any(o.features[j].windows for o in _outputs(e))]


def overview(e: "Explanation", plt: Any, ax: Any, shown: List[int], cmap: str) -> Any:
    """Which output each feature drives: one row per feature, a column for
    the whole model and one per output, coloured by the feature's score on
    that loss; "*" marks the feature important to it (FDR-controlled), "!"
    an output that reads the feature after its anchor (the causal check)."""
    outs = _outputs(e)
    k = len(outs)
    scores = np.full((len(shown), k + 1), np.nan)
    for row, j in enumerate(shown):
        scores[row, 0] = e.features[j].score
        for c, o in enumerate(outs):
            f = o.features[j]
            if f.tested:
                scores[row, c + 1] = f.score
    if ax is None:
        _, ax = plt.subplots(figsize=(max(5.0, min(16.0, 0.35 * k + 4)), max(2.0, min(10.0, 0.3 * len(shown) + 1.5))))
    im = ax.imshow(scores, aspect="auto", interpolation="nearest", cmap=cmap,  # NaN (not tested): blank
                   extent=(-0.5, k + 0.5, len(shown) - 0.5, -0.5))
    ax.figure.colorbar(im, ax=ax, label="importance score (on that loss)")
    ax.axvline(0.5, color="white", linewidth=3)
    for row, j in enumerate(shown):
        marks = [(0, e.features[j].important, False)]
        marks += [(c + 1, o.features[j].important, o.features[j].reads_future) for c, o in enumerate(outs)]
        for col, important, future in marks:
            text = ("*" if important else "") + ("!" if future else "")
            if text:
                ax.text(col, row, text, ha="center", va="center", color="red" if future else "white",
                        fontsize=10, fontweight="bold")
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels([e.features[j].name for j in shown])
    step = max(1, -(-(k + 1) // 30))
    ticks = [0] + list(range(1, k + 1, step))
    ax.set_xticks(ticks)
    ax.set_xticklabels(["whole\nmodel"] + [outs.names[t - 1] for t in ticks[1:]],
                       rotation=90 if any(len(n) > 3 for n in outs.names) or k > 12 else 0)
    ax.set_xlabel(_KIND_AXIS.get(outs.kind, "output"))
    ax.set_ylabel("feature")
    title = "%s: which %s each feature drives\n* important (FDR)" % (e.method, _KIND_WORD.get(outs.kind, "output"))
    if outs.causal_checked:
        title += "; ! read after the output's step"
    title += "; blank: not tested"
    ax.set_title(title, fontsize=10)
    return ax


_KIND_AXIS = {"classes": "class", "horizons": "forecast horizon", "steps": "output step"}
_KIND_WORD = {"classes": "class", "horizons": "horizon", "steps": "output step"}


def windows(e: "Explanation", plt: Any, axes: Optional[List[Any]], feats: List[int]) -> List[Any]:
    """One panel per feature: a row per output, the feature's windows on
    that output boxed (solid: significant), in lags from the output's
    anchor where it has one (lag 0 is the output's own timestep, a
    negative lag lies after it), else in timesteps."""
    from matplotlib.patches import Rectangle
    outs = _outputs(e)
    k = len(outs)
    if not feats:
        raise ValueError("no feature has a window on any output: there are no windows to draw")
    if axes is None:
        fig, grid = plt.subplots(1, len(feats), figsize=(max(5.0, 3.2 * len(feats) + 1),
                                                         max(2.5, min(10.0, 0.25 * k + 1.5))), squeeze=False)
        axes = list(grid[0])
    lags = outs.anchors is not None
    spans = [[(c, w, w.lag if lags else w.window) for c, o in enumerate(outs) for w in o.features[j].windows]
             for j in feats]
    drawn = [s for per in spans for _, _, s in per if s is not None]
    lo, hi = min(s[0] for s in drawn), max(s[1] for s in drawn)
    for ax, j, per in zip(axes, feats, spans):
        for c, w, span in per:
            if span is None:
                continue
            ax.add_patch(Rectangle((span[0] - 0.5, c - 0.4), span[1] - span[0] + 1, 0.8,
                                   facecolor="tab:red" if w.significant else "none", alpha=0.35 if w.significant else 1,
                                   edgecolor="red", linewidth=1.5 if w.significant else 1,
                                   linestyle="-" if w.significant else ":"))
        for c, o in enumerate(outs):
            if o.features[j].reads_future:
                ax.text(1.0, c, " !", color="red", fontweight="bold", va="center", transform=ax.get_yaxis_transform())
        if lags:
            left, right = max(hi, 0) + 0.5, min(lo, -1) - 0.5
            ax.axvspan(right, -0.5, color="0.9", zorder=0)  # after the output's own timestep
            ax.set_xlim(left, right)  # the past on the left, as on a time axis
        else:
            ax.set_xlim(-0.5, e.num_timesteps - 0.5)
            _display.time_axis(e, ax)
        ax.set_ylim(k - 0.5, -0.5)
        ax.set_yticks(range(k))
        ax.set_yticklabels(outs.names if ax is axes[0] else [])
        ax.set_title("%s%s" % (e.features[j].name, " *" if e.features[j].important else ""), fontsize=10)
    if lags:
        axes[0].set_xlabel("lag (0: the output's own step;\ngrey: after it)")
    axes[0].set_ylabel(_KIND_WORD.get(outs.kind, "output"))
    return axes


def _span(s: Tuple[int, int]) -> str:
    """A window or lag range for HTML: "3&ndash;5", or "4" for one step."""
    return str(s[0]) if s[0] == s[1] else "%d&ndash;%d" % s


def repr_html(e: "Explanation", limit: int = 30, max_outputs: int = 24) -> str:
    """The notebook table of a model with several outputs: the whole
    model's table, then one row per feature and a column per output with
    "*" where the feature is important to the output and its windows (in
    lags where the output has an anchor)."""
    outs = _outputs(e)
    whole = _display.repr_html(e, limit)
    order = sorted(e.features, key=lambda f: (not f.important, -abs(f.score), f.index))[:limit]
    shown = list(range(min(len(outs), max_outputs)))
    head = "".join("<th>%s</th>" % html.escape(outs.names[c]) for c in shown)
    rows = []
    for f in order:
        cells = []
        for c in shown:
            of = outs[c].features[f.index]
            text = ""
            if of.tested:
                text = _display._fmt(of.score) + (" *" if of.important else "")
                spans = [_span(w.lag if w.lag is not None else w.window) + ("" if w.significant else "?")
                         for w in of.windows]
                if spans:
                    text += "<br>" + ("lag " if outs.anchors is not None else "") + ", ".join(spans)
                if of.reads_future:
                    text += "<br><b>reads the future</b>"
            cells.append("<td>%s</td>" % text)
        rows.append("<tr><td>%s</td>%s</tr>" % (html.escape(f.name), "".join(cells)))
    more = ""
    if len(outs) > max_outputs:
        more = "<p>&hellip; %d more outputs (to_dataframe() has them all)</p>" % (len(outs) - max_outputs)
    what = {"classes": "classes", "horizons": "forecast horizons", "steps": "output steps"}.get(outs.kind, outs.kind)
    lead = ("<p><b>Per output</b> (%d %s): the feature's score on the output's loss, * important (FDR)%s; "
            "blank: not tested</p>" % (len(outs), what,
                                       "; windows in lags from the output's anchor (0: its own timestep), ? not "
                                       "significant" if outs.anchors is not None else "; windows, ? not significant"))
    if outs.causal_checked:
        lead += "<p>causal check: %s</p>" % (
            "some outputs read timesteps after their own (marked)" if outs.reads_future
            else "no output reads timesteps after its own")
    table = "<table><thead><tr><th>feature</th>%s</tr></thead><tbody>%s</tbody></table>" % (head, "".join(rows))
    return whole[:-len("</div>")] + lead + table + more + "</div>"
