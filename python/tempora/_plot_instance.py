"""One instance's attributions drawn behind its series, with TIME's
windows: the plot of "why this instance?". matplotlib is imported only
when it draws."""

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Union

import numpy as np

from ._attributions import Attributions, as_attributions, windows_of
from ._display import _boxes, _pyplot

if TYPE_CHECKING:
    from ._explanation import Explanation

#: The most features plot_instance shows without features=: the ones with
#: the largest total |attribution| of the instance.
DEFAULT_PANELS = 6


def _chosen(a: Attributions, attr: Any, features: Optional[Union[int, Sequence[str]]]) -> List[int]:
    """The features to draw, by position: those named, or the n (default
    DEFAULT_PANELS, or all if fewer) of largest total |attribution|,
    largest first."""
    d = attr.shape[0]
    if features is not None and not isinstance(features, (int, np.integer)):
        if isinstance(features, str):
            features = [features]
        out = []
        for name in features:
            if name not in a.feature_names:
                raise KeyError("no feature named %r (the features are %s)" % (name, ", ".join(a.feature_names)))
            out.append(a.feature_names.index(name))
        if not out:
            raise ValueError("features: name at least one feature")
        return out
    n = DEFAULT_PANELS if features is None else features
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError("features must be a positive int (how many features to show) or feature names, got %r"
                         % (features,))
    weight = np.abs(attr).sum(axis=1)
    return sorted(range(d), key=lambda j: (-weight[j], j))[:int(n)]


def _check_time(time: "Explanation", a: Attributions) -> None:
    """Refuse a TIME explanation of other data than the attributions'."""
    names = [f.name for f in time.features]
    if time.num_timesteps != a.values.shape[-1] or sorted(names) != sorted(a.feature_names):
        raise ValueError("time=: the %s explanation is of %d features x %d timesteps (%s), the attributions of "
                         "%d x %d (%s): pass the explanation of the same data"
                         % (time.method, len(names), time.num_timesteps, ", ".join(names),
                            len(a.feature_names), a.values.shape[-1], ", ".join(a.feature_names)))


def plot_instance(attributions: Union[Attributions, "Explanation"], instance: Any, *,
                  output: Optional[Union[int, str]] = None, features: Optional[Union[int, Sequence[str]]] = None,
                  time: Optional["Explanation"] = None, cmap: str = "RdBu_r", fig: Any = None) -> List[Any]:
    """Draw one instance's attributions behind its series (matplotlib).

    One panel per feature: the instance's series as a line (gaps where
    missing), over a band coloured by the attribution of each timestep
    (one colour scale for all panels, centred at zero: red raises the
    output, blue lowers it, for signed attributions), as captum's
    visualize_timeseries_attr overlays them. With time= (a TIME
    explanation of the same data), each of the feature's windows is
    shaded (solid edge: the window test is significant; dotted: searched,
    not significant), and "*" after a name marks a feature TIME found
    important (FDR-controlled).

    Parameters
    ----------
    attributions : Explanation or Attributions
        A local method's explanation (its attributions), or
        ``tempora.Attributions(values, X)`` of any method.
    instance : object
        The instance, as X names it: a DataFrame's id, else its position.
    output : int or str, optional
        For attributions of several outputs, the output to draw (position
        or name); TIME's windows are then that output's.
    features : int or sequence of str, optional
        The features to draw: these names, or this many of the largest
        total |attribution| of the instance (default: up to 6).
    time : Explanation, optional
        A TIME explanation of the same data, whose windows are drawn.
    cmap : str, default "RdBu_r"
        A diverging matplotlib colour map.
    fig : matplotlib Figure, optional
        Where to draw (default: a new figure).

    Returns
    -------
    list of matplotlib Axes, one per feature panel, top to bottom.
    """
    a = as_attributions(attributions)
    if a.series is None:
        raise ValueError("these attributions carry no data to draw: wrap them with the data they explain, "
                         "tempora.Attributions(values, X)")
    plt = _pyplot()
    i, k = a.position(instance), a._output_position(output)
    attr = a.of_instance(instance, output)
    series = a.series[i]
    out_name = a.outputs[k] if a.outputs is not None and k is not None else a.output
    if time is not None:
        _check_time(time, a)
    order = _chosen(a, attr, features)
    l = attr.shape[1]
    vmax = float(np.max(np.abs(attr))) or 1.0
    if fig is None:
        fig = plt.figure(figsize=(max(6.0, min(14.0, 0.25 * l + 4)), 1.5 * len(order) + 1.3))
    axes = fig.subplots(len(order), 1, sharex=True, squeeze=False)[:, 0]
    im = None
    for ax, j in zip(axes, order):
        s = series[j]
        seen = s[np.isfinite(s)]
        lo, hi = (float(seen.min()), float(seen.max())) if seen.size else (0.0, 1.0)
        pad = 0.1 * (hi - lo) or 0.5
        lo, hi = lo - pad, hi + pad
        im = ax.imshow(attr[j][np.newaxis, :], aspect="auto", interpolation="nearest", cmap=cmap, vmin=-vmax,
                       vmax=vmax, extent=(-0.5, l - 0.5, lo, hi), zorder=0)
        name = a.feature_names[j]
        mark = ""
        for f in windows_of(time, name, out_name) if time is not None else []:
            mark = " *" if f.important else ""
            for (start, end), significant in _boxes(f):
                ax.axvspan(start - 0.5, end + 0.5, facecolor=(0.0, 0.0, 0.0, 0.12), edgecolor="black",
                           linewidth=1.8 if significant else 1.0, linestyle="-" if significant else ":", zorder=2)
        ax.plot(np.arange(l), s, color="black", linewidth=1.4, marker=".", zorder=3)
        ax.set_xlim(-0.5, l - 0.5)
        ax.set_ylim(lo, hi)
        ax.set_ylabel(name + mark, fontsize=9)
    _time_axis(a, axes[-1])
    who = "instance %r" % (a.instances[i],)
    if out_name is not None:
        who += ", output %s" % out_name
    title = "%s attributions of %s" % (a.method or "the", who)
    if time is not None:
        title += "\nshaded: %s's windows (solid edge: significant); * important" % time.method
    axes[0].set_title(title, fontsize=10)
    fig.colorbar(im, ax=list(axes), label="attribution")
    return list(axes)


def _time_axis(a: Attributions, ax: Any) -> None:
    """Label the x axis with the timesteps: a DataFrame's time values, or
    0-based (aligned) timesteps."""
    l = a.values.shape[-1]
    if a.times is not None and len(a.times) == l:
        step = max(1, -(-l // 12))
        ticks = list(range(0, l, step))
        if a.alignment == "end":
            ticks = list(range(l - 1, -1, -step))[::-1]
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(a.times[t]) for t in ticks])
        ax.set_xlabel("time (X's time values)")
    else:
        ax.set_xlabel("timestep (0-based%s)" % (", end-aligned" if a.alignment == "end" else ""))
