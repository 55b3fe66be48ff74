"""Per-instance attributions: "why this instance?", and their plot.

The local methods (``tempora.method_table()``: the methods with local
True, OCC, TimeSHAP and LIME among the built-in ones) attribute each
explained instance's prediction to its cells. explain() reads their
attributions from the file the program writes (``tempora explain
-attributions``, the layout ``tempora evaluate -attributions`` reads) and
derives nothing. Attributions holds them with the data they explain, for a
long DataFrame and a plot of one instance; any method's array (captum's,
a gradient's) is wrapped the same way with ``tempora.Attributions(values,
X)``.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from . import _input
from ._display import _boxes, _pyplot

if TYPE_CHECKING:
    from ._explanation import Explanation, Feature


class Attributions:
    """Per-instance attributions with the data they explain.

    ``Attributions(values, X)`` wraps any method's attributions (a NumPy
    array, or anything numpy.asarray takes, such as a detached torch
    tensor) for to_dataframe and plot_instance: values of shape
    ``(instances, features, timesteps)``, or ``(instances, outputs,
    features, timesteps)`` for each output of a model with several, in
    the layout of X (``layout="nld"``: timesteps before features, as X),
    for X's first ``values.shape[0]`` instances. X, layout, feature_names,
    alignment and mask are taken as tempora.explain takes them (a
    DataFrame's ids, feature names and times label the rows); without X
    the values are in tempora's layout and features are named "0", "1",
    ... Every value must be finite. numpy.asarray(attributions) is
    values, so an Attributions goes wherever an array of attributions
    does (the output of a method under tempora.evaluate, say).

    Attributes:
        values: float64 array, read-only, ``(instances, features,
            timesteps)`` or ``(instances, outputs, features, timesteps)``.
        method: the method's name ("" if not given).
        feature_names: the D feature names.
        instances: the explained instances as X names them: a
            DataFrame's ids, else positions 0, 1, ...
        times: the time value of each timestep (a DataFrame X), or None.
        outputs: for 4-D values, the outputs' names; None otherwise.
        output: for 3-D values of one output of several, its name; None
            otherwise.
        series: the explained instances' data, float64 ``(instances,
            features, timesteps)`` with NaN where missing (the series
            plot_instance draws); None without X.
        alignment: "start" or "end", as for Explanation.
    """

    def __init__(self, values: Any, X: Any = None, *, layout: str = "ndl",
                 feature_names: Optional[Sequence[str]] = None, outputs: Optional[Sequence[Any]] = None,
                 output: Optional[Any] = None, method: str = "", alignment: str = "start", mask: Any = None) -> None:
        a = np.array(values, dtype=np.float64)
        if a.ndim not in (3, 4):
            raise ValueError("values: want (instances, features, timesteps) or (instances, outputs, features, "
                             "timesteps) attributions, got shape %s" % (a.shape,))
        data = None
        if X is not None:
            data = _input.as_data(X, layout, feature_names, alignment, mask)
            if layout == "nld" and not _input._is_dataframe(X):
                a = np.swapaxes(a, -1, -2)
        elif layout == "nld":
            a = np.swapaxes(a, -1, -2)
        elif layout != "ndl":
            raise ValueError("layout must be 'ndl' or 'nld', got %r" % (layout,))
        d, l = a.shape[-2], a.shape[-1]
        names: List[str] = [str(j) for j in range(d)]
        series = None
        instances: List[Any] = list(range(a.shape[0]))
        times = None
        if data is not None:
            m, dd, ll = data.X.shape
            if (d, l) != (dd, ll) or not 1 <= a.shape[0] <= m:
                raise ValueError("values of shape %s do not fit X of %d instances x %d features x %d timesteps "
                                 "(want up to %d instances x [outputs x] %d features x %d timesteps in X's layout)"
                                 % (np.shape(values), m, dd, ll, m, dd, ll))
            names = list(data.names) if data.names is not None else names
            series = data.X[:a.shape[0]]
            instances = [data.instance(i) for i in range(a.shape[0])]
            times, alignment = data.times, data.alignment
        elif feature_names is not None:
            names = [str(n) for n in feature_names]
            if len(names) != d:
                raise ValueError("feature_names: %d names for %d features" % (len(names), d))
        self._set(a, method, names, instances, times, outputs, output, series, alignment)

    def _set(self, a: "npt.NDArray[np.float64]", method: str, names: List[str], instances: List[Any],
             times: Optional[List[Any]], outputs: Optional[Sequence[Any]], output: Optional[Any],
             series: Optional["npt.NDArray[np.float64]"], alignment: str) -> None:
        if a.shape[0] < 1 or 0 in a.shape:
            raise ValueError("values: no attributions (shape %s)" % (a.shape,))
        if not np.all(np.isfinite(a)):
            raise ValueError("values: attributions must be finite; %d are NaN or infinite" % int(np.sum(~np.isfinite(a))))
        if a.ndim == 4:
            outputs = [str(o) for o in outputs] if outputs is not None else [str(k) for k in range(a.shape[1])]
            if len(outputs) != a.shape[1]:
                raise ValueError("outputs: %d names for %d outputs" % (len(outputs), a.shape[1]))
            if output is not None:
                raise ValueError("output= names the one output of 3-D attributions; these have %d" % a.shape[1])
        elif outputs is not None:
            raise ValueError("outputs= names the outputs of 4-D attributions (instances, outputs, features, timesteps)")
        a.setflags(write=False)
        self.values: "npt.NDArray[np.float64]" = a
        self.method = str(method)
        self.feature_names = names
        self.instances = instances
        self.times = None if times is None else list(times)
        self.outputs: Optional[List[str]] = None if outputs is None else list(outputs)
        self.output: Optional[str] = None if output is None else str(output)
        if series is not None:
            series = np.array(series, dtype=np.float64)
            series.setflags(write=False)
        self.series: Optional["npt.NDArray[np.float64]"] = series
        self.alignment = alignment

    @classmethod
    def _of(cls, values: "npt.NDArray[np.float64]", data: _input.Data, e: "Explanation") -> "Attributions":
        """The attributions the program wrote for explanation e of data
        (explain()): named as e names features and outputs."""
        self = cls.__new__(cls)
        n = values.shape[0]
        outputs = e.outputs.names if e.outputs is not None and values.ndim == 4 else None
        self._set(np.array(values, dtype=np.float64), e.method, [f.name for f in e.features],
                  [data.instance(i) for i in range(n)], data.times, outputs, e.output, data.X[:n], data.alignment)
        return self

    @property
    def num_instances(self) -> int:
        return int(self.values.shape[0])

    def position(self, instance: Any) -> int:
        """The position in values of an instance named as X names it (a
        DataFrame's id; for an array X, its position)."""
        for i, name in enumerate(self.instances):
            if name == instance:
                return i
        raise KeyError("instance %r has no attributions (%s has them for %d instances: %s)" % (
            instance, self.method or "the method", self.num_instances, _some(self.instances)))

    def _output_position(self, output: Optional[Union[int, str]]) -> Optional[int]:
        """The position on the outputs axis of output (a name or a
        position), None for 3-D values; ValueError when 4-D values need
        one."""
        if self.outputs is None:
            if output is not None and str(output) != self.output:
                raise ValueError("output=%r: these attributions are of %s" % (
                    output, "output %s alone" % self.output if self.output is not None else "a model with one output"))
            return None
        if output is None:
            raise ValueError("these attributions are of %d outputs (%s): pass output= (a position or a name)"
                             % (len(self.outputs), ", ".join(self.outputs)))
        if isinstance(output, (int, np.integer)) and not isinstance(output, bool):
            k = int(output)
            if not -len(self.outputs) <= k < len(self.outputs):
                raise IndexError("output %d: the attributions have %d outputs" % (k, len(self.outputs)))
            return k % len(self.outputs)
        if str(output) in self.outputs:
            return self.outputs.index(str(output))
        raise KeyError("no output named %r (the outputs are %s)" % (output, ", ".join(self.outputs)))

    def of_instance(self, instance: Any, output: Optional[Union[int, str]] = None) -> "npt.NDArray[np.float64]":
        """One instance's attributions, ``(features, timesteps)`` (to the
        output given, of 4-D values)."""
        i, k = self.position(instance), self._output_position(output)
        out: "npt.NDArray[np.float64]" = self.values[i] if k is None else self.values[i, k]
        return out

    def to_dataframe(self) -> Any:
        """The attributions in long form, a pandas DataFrame of one row per
        (instance, [output,] feature, timestep): columns instance (X's
        ids), output (the output's name, for a model with several
        outputs), feature (its name), timestep (0-based, aligned), time
        (a DataFrame X's time value, when known) and attribution."""
        from ._display import _pandas
        pd = _pandas()
        a = self.values
        n, d, l = a.shape[0], a.shape[-2], a.shape[-1]
        k = 1 if a.ndim == 3 else a.shape[1]
        cols: Dict[str, Any] = {"instance": np.repeat(np.array(self.instances, dtype=object), k * d * l)}
        if self.outputs is not None:
            cols["output"] = np.tile(np.repeat(np.array(self.outputs, dtype=object), d * l), n)
        elif self.output is not None:
            cols["output"] = [self.output] * (n * d * l)
        cols["feature"] = np.tile(np.repeat(np.array(self.feature_names, dtype=object), l), n * k)
        cols["timestep"] = np.tile(np.arange(l), n * k * d)
        if self.times is not None and len(self.times) == l:
            cols[_input.TIME] = np.tile(np.array(self.times, dtype=object), n * k * d)
        cols["attribution"] = a.reshape(-1)
        return pd.DataFrame(cols)

    def plot_instance(self, instance: Any, *, output: Optional[Union[int, str]] = None,
                      features: Optional[Union[int, Sequence[str]]] = None, time: Optional["Explanation"] = None,
                      cmap: str = "RdBu_r", fig: Any = None) -> Any:
        """Draw one instance's attributions behind its series; see
        tempora.plot_instance."""
        return plot_instance(self, instance, output=output, features=features, time=time, cmap=cmap, fig=fig)

    def __array__(self, dtype: Any = None) -> "npt.NDArray[Any]":
        """values, so that anything taking an array (numpy.asarray,
        tempora.evaluate's method outputs, Problem.evaluate) takes
        Attributions too."""
        return self.values if dtype is None else self.values.astype(dtype)

    def __repr__(self) -> str:
        shape = " x ".join(str(s) for s in self.values.shape)
        of = "" if self.output is None else ", output %s" % self.output
        return "<Attributions %s: %s (instances x %sfeatures x timesteps)%s>" % (
            self.method or "(method not named)", shape, "outputs x " if self.values.ndim == 4 else "", of)


def _some(names: Sequence[Any], n: int = 5) -> str:
    shown = ", ".join(repr(x) for x in names[:n])
    return shown + (", ..." if len(names) > n else "")


def no_attributions(method: str) -> ValueError:
    """The error of asking a global method's explanation for
    attributions."""
    return ValueError("this %s explanation has no per-instance attributions (a local method gives them: the methods "
                      "of tempora.method_table() with local True)" % method)


def as_attributions(a: Any, X: Any = None, **kw: Any) -> Attributions:
    """a as Attributions: itself, an Explanation's (its local; ValueError
    for a method without them), or an array wrapped with X."""
    if isinstance(a, Attributions):
        return a
    if hasattr(a, "local") and hasattr(a, "features"):  # an Explanation (not imported: it imports this module)
        if a.local is None:
            raise no_attributions(a.method)
        local: Attributions = a.local
        return local
    return Attributions(a, X, **kw)


def windows_of(time: "Explanation", feature: str, output: Optional[str]) -> List["Feature"]:
    """The result of feature in a TIME explanation (of output, when it
    has several outputs and one is named), as a one-item list; empty when
    it has none."""
    feats = time.features
    if time.outputs is not None and output is not None and output in time.outputs.names:
        feats = list(time.outputs[output].features)
    return [f for f in feats if f.name == feature]


# One instance's attributions drawn behind its series, with TIME's
# windows: the plot of "why this instance?". matplotlib is imported only
# when it draws.

#: The most features plot_instance shows without features=: the ones with
#: the largest total ``|attribution|`` of the instance.
DEFAULT_PANELS = 6


def _chosen(a: Attributions, attr: Any, features: Optional[Union[int, Sequence[str]]]) -> List[int]:
    """The features to draw, by position: those named, or the n (default
    DEFAULT_PANELS, or all if fewer) of largest total ``|attribution|``,
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
        total ``|attribution|`` of the instance (default: up to 6).
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
