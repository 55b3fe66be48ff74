"""The Explanation returned by tempora.explain, parsed from the program's
JSON output (the format of ``tempora explain -json``)."""

import json
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ._attributions import Attributions

NAN = math.nan


def _p(v: Optional[float]) -> float:
    """A JSON p-value: null (not computed) becomes NaN."""
    return NAN if v is None else float(v)


def _window(v: Any) -> Tuple[int, int]:
    """A JSON window [start, end] as a (start, end) tuple."""
    return (int(v[0]), int(v[1]))


@dataclass(frozen=True)
class WindowResult:
    """One of a feature's windows (TIME, decision 18 of docs/decisions.md).

    Timesteps are 0-based and ends inclusive. The ordering p-values are NaN
    when the window was not tested for ordering (it is not significant).
    """

    window: Tuple[int, int]  # (start, end), inclusive
    start_range: Tuple[int, int]  # where the start lies by the search's sure probes
    end_range: Tuple[int, int]  # where the end lies by the search's sure probes
    score: float  # mean loss increase when the window is permuted
    p_value: float
    p_adjusted: float  # Benjamini-Hochberg, within the feature's family
    significant: bool  # permuting this window raises the loss (FDR-controlled)
    ordering_p_value: float
    ordering_p_adjusted: float
    ordering_important: bool  # the order within this window matters
    # The window in lag coordinates of the output it explains, (first lag,
    # last lag) inclusive: lag = the output's anchor − timestep, so lag 0
    # is the output's own timestep and a negative lag lies after it. None
    # for the whole model, one output, and outputs without an anchor
    # (classes).
    lag: Optional[Tuple[int, int]] = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "WindowResult":
        """The WindowResult of one entry of a feature's JSON "windows"."""
        lag = d.get("lag")
        return cls(
            lag=None if lag is None else _window(lag),
            window=_window(d["window"]), start_range=_window(d["start_range"]), end_range=_window(d["end_range"]),
            score=float(d["score"]), p_value=_p(d.get("p_value")), p_adjusted=_p(d.get("p_adjusted")),
            significant=bool(d.get("significant", False)),
            ordering_p_value=_p(d.get("ordering_p_value")), ordering_p_adjusted=_p(d.get("ordering_p_adjusted")),
            ordering_important=bool(d.get("ordering_important", False)),
        )


@dataclass(frozen=True)
class Feature:
    """The result for one feature (or one group of a hierarchy).

    p-values a method does not compute are NaN; window is None when no
    window was searched. Timesteps are 0-based and window ends inclusive.
    windows lists every window of the feature in time order (TIME; empty
    when none was searched or the method has none); the single-window
    fields repeat the one with the smallest adjusted p-value.

    A method without tests (the program's method table says tests=False:
    LIME, SAGE, PERM, OCC, TimeSHAP, ...) computes scores only: its
    features have tested False and None for the outcomes of tests
    (important, window_significant, ordering_important,
    window_ordering_important), since nothing was tested.
    """

    index: int  # feature index, -1 for a group
    name: str
    members: Tuple[int, ...]  # the features of the node (one for a feature)
    tested: bool  # False for a method without tests, and when a hierarchical test never reached the node
    important: Optional[bool]  # the importance test was rejected (FDR-controlled); None: not tested
    score: float  # importance score (TIME: mean loss increase when permuted)
    p_value: float
    p_adjusted: float  # Benjamini-Hochberg adjusted p-value
    window: Optional[Tuple[int, int]]  # (start, end), inclusive
    window_score: float
    window_p_value: float
    window_p_adjusted: float
    window_significant: Optional[bool]
    ordering_p_value: float
    ordering_p_adjusted: float
    ordering_important: Optional[bool]  # the order of its values over the sequence matters
    window_ordering_p_value: float
    window_ordering_important: Optional[bool]  # the order within its window matters
    windows: Tuple[WindowResult, ...] = ()  # every window, in time order
    future_p_value: float = NAN
    future_p_adjusted: float = NAN  # Benjamini-Hochberg, within the node's causal family
    reads_future: bool = False  # the output reads timesteps after its anchor
    # The first of its tests a budget stopped before they were decided
    # ("overall", "window", "window ordering", "future"); None when all were.
    undecided: Optional[str] = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any], tests: bool = True) -> "Feature":
        """The Feature of one entry of the program's JSON "features"; tests
        is False for a method without tests (the method table's tests),
        whose features are not tested: tested False, outcomes None."""
        window = d.get("window")
        members = d.get("members")
        if members is None:
            members = [d["index"]] if d["index"] >= 0 else []
        f = cls(
            index=int(d["index"]), name=d["name"], members=tuple(int(m) for m in members),
            tested=bool(d["tested"]), important=bool(d["important"]), score=float(d["score"]),
            p_value=_p(d.get("p_value")), p_adjusted=_p(d.get("p_adjusted")),
            window=None if window is None else _window(window),
            window_score=float(d.get("window_score", 0.0)),
            window_p_value=_p(d.get("window_p_value")), window_p_adjusted=_p(d.get("window_p_adjusted")),
            window_significant=bool(d.get("window_significant", False)),
            ordering_p_value=_p(d.get("ordering_p_value")), ordering_p_adjusted=_p(d.get("ordering_p_adjusted")),
            ordering_important=bool(d.get("ordering_important", False)),
            window_ordering_p_value=_p(d.get("window_ordering_p_value")),
            window_ordering_important=bool(d.get("window_ordering_important", False)),
            windows=tuple(WindowResult.from_json(w) for w in d.get("windows") or []),
            future_p_value=_p(d.get("future_p_value")), future_p_adjusted=_p(d.get("future_p_adjusted")),
            reads_future=bool(d.get("reads_future", False)),
            undecided=d.get("undecided") or None,
        )
        if tests:
            return f
        return replace(f, tested=False, important=None, window_significant=None, ordering_important=None,
                       window_ordering_important=None)

    @property
    def lag(self) -> Optional[Tuple[int, int]]:
        """The lag coordinates of window (the entry of windows that is
        window), or None (no window, or an output without an anchor)."""
        for w in self.windows:
            if w.window == self.window:
                return w.lag
        return None


@dataclass(frozen=True)
class Diagnostics:
    """What the tests could see (TIME): how good the model is, and how
    large an effect its tests find, for reading an explanation that found
    little."""

    baseline_loss: float  # the model's mean loss on the data
    constant_loss: float  # the mean loss of the best constant prediction
    detectable_effect: float  # about the smallest importance found half the time (0: no draw moved the loss)


@dataclass(frozen=True)
class DrawCount:
    """The permutation draws of one kind of test (TIME: overall, window
    search, ordering, window, window ordering; PERM: cell)."""

    test: str
    tests: int  # number of tests run
    draws: int  # draws evaluated
    max_draws: int  # draws had every test run to its cap (fixed-P cost)

    @property
    def saved(self) -> float:
        """Fraction of max_draws the sequential tests did not need."""
        return 1 - self.draws / self.max_draws if self.max_draws else 0.0


@dataclass(frozen=True)
class BatchCost:
    """The measured cost of one batch size: seconds per instance of a pass
    over the data in calls of size instances."""

    size: int
    seconds_per_instance: float


@dataclass(frozen=True)
class Batch:
    """The batch size of the model calls (TIME's batch=): the most
    instances per call, given or chosen by timing (auto)."""

    size: int
    auto: bool
    costs: Tuple[BatchCost, ...] = ()  # the sizes timed, largest first (auto)


@dataclass(frozen=True)
class Estimate:
    """A run's estimate of its cost, made during the run (TIME: after the
    baseline, and once the feature tests are decided)."""

    after: str  # "baseline" or "feature tests"
    model_calls: float  # the run's total, at most
    instance_evaluations: float  # the run's total, at most
    seconds_per_instance: float  # measured so far
    seconds_left: float  # at most, at seconds_per_instance


def _batch(b: Optional[Mapping[str, Any]]) -> Optional[Batch]:
    if b is None:
        return None
    return Batch(size=int(b["size"]), auto=bool(b.get("auto", False)),
                 costs=tuple(BatchCost(size=int(c["size"]), seconds_per_instance=float(c["seconds_per_instance"]))
                             for c in b.get("costs") or []))


@dataclass(frozen=True)
class Accounting:
    """What an explanation cost."""

    model_calls: int
    instance_evaluations: int
    window_probes: int
    runtime_seconds: float  # wall time of the method in the tempora program
    incomplete: bool  # stopped on a budget before its own stopping rule
    draws: Tuple[DrawCount, ...] = ()  # per kind of permutation test, in order
    stopped_by: Optional[str] = None  # the budget that stopped the run: "max-calls" or "max-time"
    batch: Optional[Batch] = None  # the batch size, when set or chosen (TIME's batch=)


#: The outputs' kinds (tempora's OutputKind): the probabilities of K ≥ 3
#: classes, K forecast horizons after the sequence, or one output per step
#: of a sequence-to-sequence model.
OUTPUT_KINDS = ("classes", "horizons", "steps")


@dataclass(frozen=True)
class OutputResult:
    """One output's results, for a model with several outputs: the
    features (and groups) tested on that output's loss, and its cells.

    TIME tests a feature on an output only when the feature is important
    to the whole model (the output family under it); features it did not
    reach have tested False. Windows are in timesteps (window) and, for an
    output with an anchor, in lags from it (WindowResult.lag).
    """

    index: int  # the output's position, 0 to K-1
    name: str
    anchor: Optional[int]  # its timestep on the input's time axis (None for classes)
    features: Tuple[Feature, ...]
    groups: Tuple[Feature, ...]
    cells: "npt.NDArray[np.float64]"  # (features, timesteps), read-only

    @property
    def important(self) -> List[str]:
        """Names of the features important to this output, in index order."""
        return [f.name for f in self.features if f.important]

    def feature(self, key: Union[int, str]) -> Feature:
        """The Feature with this name, or this index if key is an int."""
        return _find(self.features, key)


class OutputResults(Sequence[OutputResult]):
    """An explanation's results per output (Explanation.outputs, None for a
    model with one output): a sequence of OutputResult, indexed by position
    or by name.

    Attributes:
        kind: "classes", "horizons" or "steps".
        names: the outputs' names, in order.
        anchors: each output's timestep on the input's time axis (a
            forecast's lies after the last timestep), or None for classes.
        causal_checked: every feature important to an output with an
            anchor inside the sequence was tested on the timesteps after it.
        reads_future: some output reads timesteps after its anchor
            (Feature.reads_future says which).
    """

    def __init__(self, doc: Mapping[str, Any], d: int, l: int, tests: bool = True) -> None:
        self.kind: str = str(doc["kind"])
        self.names: List[str] = [str(n) for n in doc["names"]]
        anchors = doc.get("anchors")
        self.anchors: Optional[List[int]] = None if anchors is None else [int(a) for a in anchors]
        self.causal_checked: bool = bool(doc.get("causal_checked", False))
        self.reads_future: bool = bool(doc.get("reads_future", False))
        outs = []
        for k, o in enumerate(doc["per_output"]):
            cells = np.array(o["cells"], dtype=np.float64).reshape(d, l)
            cells.setflags(write=False)
            outs.append(OutputResult(
                index=k, name=str(o["name"]), anchor=None if self.anchors is None else self.anchors[k],
                features=tuple(Feature.from_json(f, tests) for f in o["features"]),
                groups=tuple(Feature.from_json(g, tests) for g in o.get("groups") or []), cells=cells))
        self._outputs = outs

    @overload
    def __getitem__(self, key: Union[int, str]) -> OutputResult: ...

    @overload
    def __getitem__(self, key: slice) -> Sequence[OutputResult]: ...

    def __getitem__(self, key: Union[int, str, slice]) -> Union[OutputResult, Sequence[OutputResult]]:
        if isinstance(key, slice):
            return self._outputs[key]
        return self._outputs[self.position(key)]

    def position(self, key: Union[int, str]) -> int:
        """The position of the output named key, or key itself if it is an
        int (negative counts from the end)."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            k = int(key)
            if not -len(self._outputs) <= k < len(self._outputs):
                raise IndexError("output %d: the model has %d outputs" % (k, len(self._outputs)))
            return k % len(self._outputs)
        if key in self.names:
            return self.names.index(str(key))
        raise KeyError("no output named %r (the outputs are %s)" % (key, ", ".join(self.names)))

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self) -> Iterator[OutputResult]:
        return iter(self._outputs)

    def __repr__(self) -> str:
        return "<OutputResults: %d %s %s>" % (len(self), self.kind, self.names)


def _find(features: Sequence[Feature], key: Union[int, str]) -> Feature:
    """The Feature with this name, or this index if key is an int."""
    if isinstance(key, (int, np.integer)):
        return features[int(key)]
    for f in features:
        if f.name == key:
            return f
    raise KeyError("no feature named %r" % (key,))


class Explanation:
    """The explanation of a model, as computed by the tempora program.

    Attributes:
        method: the method's name, e.g. "TIME" or "SAGE-m".
        features: one Feature per feature, in index order.
        groups: one Feature per tested group of a hierarchy (pre-order);
            empty without a hierarchy.
        cells: float array of shape (features, timesteps), the score of
            each feature at each timestep (read-only).
        accounting: an Accounting (model calls, instance evaluations, ...).
        warnings: non-fatal problems reported by the method.
        alignment: "start" or "end", the alignment of the explained data's
            sequences: timestep 0 is each sequence's first step ("start"),
            or timestep num_timesteps-1 is each sequence's last step
            ("end"); windows and cells are in this aligned time.
        report: the program's text report (what ``tempora explain``
            prints); str(explanation) returns it.
        times: for a DataFrame X, its time values, one per timestep (the
            aligned time axis); None otherwise.
        lengths: for data with missing values, the length of each
            instance's sequence (its span of timesteps in aligned time, as
            the report counts it), int64; None for complete data.
        missing_rate: for data with missing values, per feature (index
            order) the share of its cells inside the sequences that are
            NaN (padding outside them not counted), float64; None for
            complete data.
        observed: for data with missing values, a float64 array (features,
            timesteps): the share of instances with an observed value of the
            feature at the timestep (a window where few instances are
            observed rests on few); None for complete data.
        outputs: for a model with several outputs (class probabilities,
            forecast horizons, the steps of a sequence-to-sequence model),
            each output's results (OutputResults, indexed by position or
            name); None for a model with one output. features, groups and
            cells are then the whole model's: its loss (the categorical
            cross-entropy for classes, else the mean of the outputs' losses)
            when a feature is permuted.
        output: the name of the one output explained, when a method was
            asked to explain one output of several (output=, or target=):
            features, groups and cells are then that output's, and outputs
            is None; None for an explanation of the whole model.
        tests: whether the method tests (the program's method table: TIME
            does; LIME, SAGE, PERM, OCC, TimeSHAP compute scores only, and
            their features then have tested False and important None);
            None when not known (an Explanation made from JSON without
            asking the program: the features are as the JSON has them).
        diagnostics: a Diagnostics (TIME): the model's mean loss against a
            constant prediction's, and about the smallest importance score
            its tests find (it shrinks like 1/sqrt(instances)); None for
            methods that do not report it.
        attributions: for a local method (OCC, TimeSHAP, LIME: those of
            ``tempora.method_table()`` with local True), the per-instance
            attributions the program wrote, a read-only float64 array
            (instances, features, timesteps), or (instances, outputs,
            features, timesteps) for every output of a model with several;
            the instances are X's first (all for OCC, TimeSHAP's and LIME's
            instances_explained); None for a global method.
        local: the same attributions as an Attributions, with the data
            they explain (to_dataframe("attributions"), plot_instance);
            None for a global method.

    lengths, missing_rate and observed are the program's data summary,
    members of the JSON form (written only for data with missing values;
    None too for the JSON of a program older than the summary); times come
    from the DataFrame given to tempora.explain and are not part of it.
    """

    def __init__(self, doc: Union[str, bytes, Mapping[str, Any]], report: str = "",
                 tests: Optional[bool] = None) -> None:
        if isinstance(doc, (str, bytes)):
            doc = json.loads(doc)
        assert isinstance(doc, Mapping)
        self._doc: Dict[str, Any] = dict(doc)
        self.method: str = doc["method"]
        self.tests: Optional[bool] = None if tests is None else bool(tests)
        tested = tests is not False
        self.features = [Feature.from_json(f, tested) for f in doc["features"]]
        self.groups = [Feature.from_json(g, tested) for g in doc.get("groups") or []]
        d, l = int(doc["num_features"]), int(doc["num_timesteps"])
        cells = np.array(doc["cells"], dtype=np.float64).reshape(d, l)
        cells.setflags(write=False)
        self.cells: "npt.NDArray[np.float64]" = cells
        a = doc["accounting"]
        self.accounting = Accounting(
            model_calls=int(a["model_calls"]), instance_evaluations=int(a["instance_evaluations"]),
            window_probes=int(a.get("window_probes", 0)), runtime_seconds=float(a.get("runtime_seconds", 0.0)),
            incomplete=bool(a.get("incomplete", False)),
            draws=tuple(DrawCount(test=str(c["test"]), tests=int(c["tests"]), draws=int(c["draws"]),
                                  max_draws=int(c["max_draws"])) for c in a.get("draws") or []),
            stopped_by=a.get("stopped_by") or None, batch=_batch(a.get("batch")))
        #: The run's estimates of its cost (tempora.explain fills them in
        #: from the program's progress lines).
        self.estimates: Tuple[Estimate, ...] = ()
        self.warnings: List[str] = list(doc.get("warnings") or [])
        g = doc.get("diagnostics")
        self.diagnostics: Optional[Diagnostics] = None if g is None else Diagnostics(
            baseline_loss=float(g["baseline_loss"]), constant_loss=float(g["constant_loss"]),
            detectable_effect=float(g["detectable_effect"]))
        self.alignment: str = str(doc.get("alignment") or "start")  # absent for start-aligned data
        self.report = report
        self.times: Optional[List[Any]] = None
        # The data summary: the three come together, or not at all.
        self.lengths: Optional["npt.NDArray[np.int64]"] = None
        self.missing_rate: Optional["npt.NDArray[np.float64]"] = None
        self.observed: Optional["npt.NDArray[np.float64]"] = None
        if doc.get("lengths") is not None:
            self.lengths = np.array(doc["lengths"], dtype=np.int64)
            self.missing_rate = np.array(doc["missing_rate"], dtype=np.float64)
            self.observed = np.array(doc["observed"], dtype=np.float64).reshape(d, l)
        self.output: Optional[str] = None if doc.get("output") is None else str(doc["output"])
        self.outputs: Optional[OutputResults] = None
        if doc.get("outputs") is not None:
            self.outputs = OutputResults(doc["outputs"], d, l, tested)
        self.local: Optional["Attributions"] = None  # set by explain() for a local method

    def _describe_data(self, times: Optional[List[Any]]) -> None:
        """Record a DataFrame's time values, which tempora.explain knows
        and the JSON form does not."""
        self.times = None if times is None else list(times)

    @property
    def num_features(self) -> int:
        return self.cells.shape[0]

    @property
    def num_timesteps(self) -> int:
        return self.cells.shape[1]

    @property
    def attributions(self) -> Optional["npt.NDArray[np.float64]"]:
        """The per-instance attributions of a local method (see the class
        documentation), or None."""
        return None if self.local is None else self.local.values

    def plot_instance(self, instance: Any, *, output: Optional[Union[int, str]] = None,
                      features: Optional[Union[int, Sequence[str]]] = None, time: Optional["Explanation"] = None,
                      cmap: str = "RdBu_r", fig: Any = None) -> Any:
        """Draw one instance's attributions behind its series, with the
        windows of a TIME explanation time= (a local method's
        explanation); see tempora.plot_instance."""
        from ._attributions import plot_instance
        return plot_instance(self, instance, output=output, features=features, time=time, cmap=cmap, fig=fig)

    @property
    def important(self) -> List[str]:
        """Names of the important features, in index order (empty for
        methods without tests, which test nothing: see tests)."""
        return [f.name for f in self.features if f.important]

    def feature(self, key: Union[int, str]) -> Feature:
        """The Feature with this name, or this index if key is an int."""
        return _find(self.features, key)

    def to_dict(self) -> Dict[str, Any]:
        """The explanation as the program's JSON document (a fresh copy)."""
        d: Dict[str, Any] = json.loads(json.dumps(self._doc))
        return d

    def to_json(self, indent: Optional[int] = None) -> str:
        """The explanation in tempora's JSON format (``tempora explain
        -json``): not-computed p-values are null, windows [start, end]."""
        return json.dumps(self._doc, indent=indent)

    @classmethod
    def from_json(cls, text: Union[str, bytes], tests: Optional[bool] = None) -> "Explanation":
        """Parse an explanation written by to_json or ``tempora explain -json``.
        tests says whether its method tests (see tests); by default the
        program's method table is asked (tempora.find_binary), and without
        a program it stays unknown (None)."""
        doc = json.loads(text)
        if tests is None:
            tests = _method_tests(str(doc.get("method", "")))
        return cls(doc, tests=tests)

    def to_dataframe(self, kind: str = "features") -> Any:
        """The explanation as a pandas DataFrame.

        Parameters
        ----------
        kind : {"features", "cells", "groups"}, default "features"
            "features": one row per feature, indexed by name, with the
            columns of Feature (a window as window_start and window_end,
            0-based and inclusive, missing when no window was searched;
            p-values a method does not compute are NaN; the last column,
            windows, lists every window as "start-end" separated by ";",
            with "*" after each significant one and "o" after each whose ordering
            matters, as in the program's CSV). "cells": one row
            per (feature, timestep), with the score, whether the timestep
            lies in the feature's window and whether the feature is
            important (and, for end-aligned data, steps_before_end:
            num_timesteps-1-timestep; for a DataFrame X, time: its time
            value of the timestep; for data with missing values,
            observed: the share of instances observed in the cell).
            "groups": the tested groups of a
            hierarchy, with their members. For data with missing values
            the features frame has a column missing_rate (the share of the
            feature's cells inside the sequences that are NaN).
            "attributions" (a local method): the per-instance attributions
            in long form, one row per (instance, [output,] feature,
            timestep), as Attributions.to_dataframe gives them.

        Returns
        -------
        pandas.DataFrame
        """
        if kind == "attributions":
            from ._attributions import no_attributions
            if self.local is None:
                raise no_attributions(self.method)
            return self.local.to_dataframe()
        if self.outputs is not None:
            from . import _display_outputs
            return _display_outputs.to_dataframe(self, kind)
        from . import _display
        return _display.to_dataframe(self, kind)

    def plot(self, ax: Any = None, features: Optional[int] = None, cmap: str = "viridis",
             output: Optional[Union[int, str]] = None, view: Optional[str] = None) -> Any:
        """Draw the explanation with matplotlib.

        For a model with one output (and for one output of several, with
        output=), the importance heat map (features × timesteps): each row
        is a feature, each column a 0-based timestep, coloured by the cell
        score. Each of a feature's windows is boxed (solid: the window test
        is significant; dotted: searched but not significant); "*" after a
        name marks an important feature (FDR-controlled), "o" one whose
        ordering matters.

        For a model with several outputs (without output=), a figure of
        two parts: the overview of which output each feature drives (a
        row per feature; a column for the whole model and one per class,
        horizon or output step, coloured by the feature's score on that
        output's loss; "*" important to it, "!" the output reads the
        feature after its own step, TIME's causal check; blank: not
        tested), and below it a panel per feature with windows: a row per
        output with its windows boxed, in lags from the output's anchor
        (lag 0 is the output's own timestep; the past on the left, the
        shaded lags after it) for horizons and steps, in timesteps for
        classes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure). With several outputs,
            ax draws one view (default "outputs").
        features : int, optional
            Show only this many features: the important ones first, then by
            score (in index order on the plot).
        cmap : str, default "viridis"
            The matplotlib colour map.
        output : int or str, optional
            The heat map of this output (its position or name) of a model
            with several outputs.
        view : {"outputs", "windows", "cells"}, optional
            With several outputs and no output=, one part only: the
            overview, the windows per output, or the whole model's heat
            map.

        Returns
        -------
        matplotlib.axes.Axes, or for the two parts of several outputs a
        list of Axes (the overview first, then the window panels).
        """
        if self.outputs is not None and output is None:
            from . import _display_outputs
            return _display_outputs.plot(self, ax, features, cmap, view)
        from . import _display
        return _display.plot(self, ax=ax, features=features, cmap=cmap, output=output, view=view)

    def _repr_html_(self) -> str:
        if self.outputs is not None:
            from . import _display_outputs
            return _display_outputs.repr_html(self)
        from . import _display
        return _display.repr_html(self)

    def __str__(self) -> str:
        if self.report:
            return self.report
        return repr(self)

    def __repr__(self) -> str:
        of = ""
        if self.outputs is not None:
            of = ", %d %s" % (len(self.outputs), self.outputs.kind)
        elif self.output is not None:
            of = ", output %s" % self.output
        return "<Explanation %s: %d features x %d timesteps%s, important %s>" % (
            self.method, self.num_features, self.num_timesteps, of,
            "not tested" if self.tests is False else self.important)


def _method_tests(method: str) -> Optional[bool]:
    """Whether method tests, by the method table of the program
    tempora.find_binary finds; None without a program or the method."""
    from ._binary import TemporaError
    from ._methods import method_table
    try:
        return method_table().lookup(method).tests
    except (TemporaError, ValueError, OSError):
        return None
