"""Input as Python users have it: NumPy arrays in either common layout,
pandas DataFrames (wide or long), class labels of any type, and the
predict functions of scikit-learn, PyTorch and Keras-style models.

Everything here turns the caller's objects into what the tempora program
reads (a float64 array of shape (instances, features, timesteps), float
targets, a function of such a batch) and raises errors that name the
argument of tempora.explain at fault and what was expected, for what it
cannot convert. Whether the data is fit to explain (no infinity, every
instance and feature observed, alignment, finite targets, names) is the
program's decision, reported as a structured error (docs/errors.md) that
_errors maps back to the caller's names through Data.
"""

import re
import sys
import warnings
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from . import _stated

#: The layouts of a NumPy X: "ndl" is (instances, features, timesteps),
#: tempora's own; "nld" is (instances, timesteps, features), the layout of
#: Keras and of PyTorch's batch-first recurrent layers.
LAYOUTS = ("ndl", "nld")

#: The alignments of sequences of different lengths: "start" (timestep 0
#: is each sequence's first step; shorter sequences end early) or "end"
#: (the last timestep is each sequence's last step; shorter sequences
#: start late).
ALIGNMENTS = ("start", "end")

#: The column names of a long DataFrame, unless instance_col=, time_col=,
#: feature_col= and value_col= name others.
INSTANCE, TIME, FEATURE, VALUE = "instance", "time", "feature", "value"
_TIME_NAMES = ("time", "timestep")


class Columns:
    """The columns of a DataFrame X: its instance, time, feature and value
    columns as the caller names them (instance_col=, time_col=,
    feature_col=, value_col=; None for the default names above). The Data
    of a DataFrame holds them resolved to X's own labels, so that long
    targets keyed by instance use X's instance column."""

    def __init__(self, instance: Any = None, time: Any = None, feature: Any = None, value: Any = None) -> None:
        self.instance, self.time, self.feature, self.value = instance, time, feature, value

    def named(self) -> bool:
        """Whether the caller named any column."""
        return any(c is not None for c in (self.instance, self.time, self.feature, self.value))

    def resolved(self, instance: Any, time: Any) -> "Columns":
        """These columns with X's instance and time labels, and the feature
        and value names (the defaults where none was given)."""
        return Columns(instance, time, FEATURE if self.feature is None else self.feature,
                       VALUE if self.value is None else self.value)


def frame_columns(instance_col: Any = None, time_col: Any = None, feature_col: Any = None, value_col: Any = None,
                  entity_col: Any = None) -> Columns:
    """The keywords of tempora.explain and as_array that name a DataFrame's
    columns, as Columns; entity_col is timeshap's spelling of instance_col."""
    if entity_col is not None:
        if instance_col is not None and not _same(instance_col, entity_col):
            raise ValueError("instance_col=%r and entity_col=%r name the same column (entity_col is another "
                             "spelling of instance_col); pass one" % (instance_col, entity_col))
        instance_col = entity_col
    given = {"instance_col": instance_col, "time_col": time_col, "feature_col": feature_col, "value_col": value_col}
    named = [(k, v) for k, v in given.items() if v is not None]
    for k, v in named:
        if not isinstance(v, (str, int, np.integer)) or isinstance(v, bool):
            raise TypeError("%s must be a column name of X; got %s" % (k, type(v).__name__))
    for i, (k, v) in enumerate(named):
        for k2, v2 in named[:i]:
            if _same(v, v2):
                raise ValueError("%s=%r and %s=%r name the same column" % (k2, v2, k, v))
    return Columns(instance_col, time_col, feature_col, value_col)


def _is_dataframe(x: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(x, pd.DataFrame)


def _is_series(x: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(x, pd.Series)


def _to_numpy(x: Any) -> Any:
    """x without a framework around it: a PyTorch tensor detached and moved
    to the CPU, a pandas object's values."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    elif _is_series(x):
        x = x.to_numpy()
    return x


class Data:
    """The data of an explanation: X as (instances, features, timesteps),
    with NaN for missing values, whether it has any (missing), the feature
    names (None for the program's default names), the instance ids of a
    DataFrame (None for an array), the layout predict receives its batches
    in and the alignment; and what names the program's coordinates in the
    caller's terms (source: "array", "list" or "frame"; the lengths of a
    list's sequences; names_from: the argument the names came from).

    Nothing here checks the data against tempora's rules: the program
    decides (Dataset.Observe) and reports what it refuses as a structured
    error (docs/errors.md), which _errors maps back with label, cell and
    index below."""

    def __init__(self, X: "npt.NDArray[np.float64]", missing: bool, names: Optional[List[str]],
                 instances: Optional[List[Any]], layout: str, alignment: str = "start",
                 times: Optional[List[Any]] = None, source: str = "array", lengths: Optional[List[int]] = None,
                 names_from: str = "feature_names") -> None:
        self.X, self.names, self.instances, self.layout = X, names, instances, layout
        # Whether X holds a NaN, for the hint about models that predict
        # NaN where all they read is missing (_has_nan).
        self.missing = missing
        self.alignment = alignment
        self.times = times  # a DataFrame's time values, one per timestep (None for an array)
        self.source, self.lengths, self.names_from = source, lengths, names_from
        self.columns = Columns()  # a DataFrame's columns, resolved (_from_dataframe)

    def instance(self, i: int) -> Any:
        """Instance i as the caller names it: a DataFrame's id, else i."""
        return self.instances[i] if self.instances is not None else i

    def feature(self, j: int) -> Any:
        """Feature j as the caller names it: its name, else j."""
        return self.names[j] if self.names is not None and j < len(self.names) else j

    def time(self, i: int, t: int) -> Any:
        """Timestep t of instance i as the caller has it: a DataFrame's
        time value, the position in a list's sequence i, else t."""
        if self.times is not None:
            return self.times[t]
        if self.source == "list" and self.lengths is not None and self.alignment == "end":
            return t - (self.X.shape[2] - self.lengths[i])
        return t

    def index(self, i: int, j: int, t: int) -> Optional[Tuple[int, ...]]:
        """The index of cell (i, j, t) in the caller's array (of X[i] for a
        list), in the caller's layout; None for a DataFrame."""
        if self.source == "frame":
            return None
        tt = self.time(i, t)
        if self.source == "list":
            return (j, tt) if self.layout == "ndl" else (tt, j)
        return (i, j, tt) if self.layout == "ndl" else (i, tt, j)

    def cell(self, i: int, j: int, t: int) -> str:
        """Cell (i, j, t) in the caller's terms, for messages."""
        if self.source == "frame":
            return "instance %r, time %r, feature %r" % (self.instance(i), self.time(i, t), self.feature(j))
        ix = self.index(i, j, t)
        if self.source == "list":
            return "X[%d][%d, %d]" % ((i,) + tuple(ix or ()))
        return "index %s" % (ix,)

    def instance_label(self, i: int) -> str:
        return repr(self.instances[i]) if self.instances is not None else str(i)

    def feature_label(self, j: int) -> str:
        return repr(self.names[j]) if self.names is not None and j < len(self.names) else str(j)


def _all_finite(X: "npt.NDArray[np.float64]") -> bool:
    """Whether X surely holds neither NaN nor an infinity, cheaply: a
    finite sum proves every value finite, since a NaN or an infinity makes
    the sum NaN or infinite. It takes one pass over X and no array of its
    size. False is not proof of the contrary: finite values whose sum
    overflows (beyond 1.8e308) give False too."""
    with np.errstate(over="ignore", invalid="ignore"):  # the overflow just described
        return bool(np.isfinite(np.add.reduce(X, axis=None)))


def _has_nan(X: "npt.NDArray[np.float64]") -> bool:
    """Whether X holds a NaN: on the common X without any, one cheap pass
    (_all_finite), where np.isnan would take a pass and an array of X's
    size; else the exact answer."""
    return not _all_finite(X) and bool(np.isnan(X).any())


def _as_mask(mask: Any, shape: Tuple[int, ...], what: str, xwhat: str) -> "npt.NDArray[np.bool_]":
    """mask (booleans or 0/1, True: observed) as a boolean array of the
    shape of X (xwhat names X's part in messages)."""
    try:
        a = np.asarray(_to_numpy(mask))
    except (TypeError, ValueError) as exc:
        raise TypeError("%s must be an array of booleans or 0/1; got %s (%s)" % (what, type(mask).__name__, exc)) \
            from None
    if a.shape != shape:
        raise ValueError("%s has shape %s but %s has shape %s" % (what, a.shape, xwhat, shape))
    if a.dtype == np.bool_:
        return a
    if a.dtype.kind not in "biuf":
        raise ValueError("%s must hold booleans or 0/1 (1: observed); got values of type %s" % (what, a.dtype))
    bad = (a != 0) & (a != 1)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError("%s must hold booleans or 0/1 (1: observed); it holds %r at index %s"
                         % (what, a[at].item(), at))
    out: "npt.NDArray[np.bool_]" = a == 1
    return out


class _ObservedNaN:
    """The cells a mask marks observed where X holds NaN, counted over one
    X (an array, or every sequence of a list): they are missing whatever
    the mask says, and warn says so once, as the command line's -mask
    does, naming the first in X's own layout."""

    def __init__(self, layout: str) -> None:
        self.axes = ("feature", "timestep") if layout == "ndl" else ("timestep", "feature")
        self.n = 0
        self.first = ""

    def add(self, a: "npt.NDArray[np.float64]", m: "npt.NDArray[np.bool_]", prefix: Tuple[int, ...]) -> None:
        """Count the cells of a (values in X's layout, prefix their index
        in X) that m marks observed and that hold NaN."""
        bad = m & np.isnan(a)
        n = int(bad.sum())
        if n and not self.n:
            at = prefix + tuple(int(i) for i in np.argwhere(bad)[0])
            self.first = ", ".join("%s %d" % (name, i) for name, i in zip(("instance",) + self.axes, at))
        self.n += n

    def warn(self, what: str, xwhat: str, stacklevel: int) -> None:
        """Warn once if any cell was counted; stacklevel is that of the
        caller of explain."""
        if self.n:
            warnings.warn("%s marks %d %s observed where %s holds NaN (the first at %s): they are missing"
                          % (what, self.n, "cell" if self.n == 1 else "cells", xwhat, self.first),
                          stacklevel=stacklevel)


def _check_alignment(alignment: Any) -> str:
    if not isinstance(alignment, str) or alignment not in ALIGNMENTS:
        raise ValueError("alignment must be 'start' (timestep 0 is each sequence's first step) or 'end' (the last "
                         "timestep is each sequence's last step), got %r" % (alignment,))
    return alignment


def _is_sequence_list(X: Any) -> bool:
    """Whether X is a list (or tuple) of per-instance 2-D arrays."""
    if not isinstance(X, (list, tuple)) or not X:
        return False
    first = _to_numpy(X[0])
    return getattr(first, "ndim", None) == 2 or (
        isinstance(first, (list, tuple)) and bool(first) and isinstance(first[0], (list, tuple))
        and not (first[0] and isinstance(first[0][0], (list, tuple))))


def _from_list(X: Sequence[Any], layout: str, alignment: str, mask: Any) -> "npt.NDArray[np.float64]":
    """A list of per-instance 2-D arrays, of lengths that may differ, as
    one (instances, features, timesteps) array: each sequence placed at
    the start (alignment="start") or the end ("end") of the time axis,
    the rest NaN."""
    shape = "(features, timesteps)" if layout == "ndl" else "(timesteps, features)"
    if mask is not None and (not isinstance(mask, (list, tuple)) or len(mask) != len(X)):
        raise ValueError("mask: with a list X, mask is a list of %d arrays, one of the shape of each array of X; "
                         "got %s" % (len(X), type(mask).__name__ if not isinstance(mask, (list, tuple))
                                     else "a list of %d" % len(mask)))
    seqs: List["npt.NDArray[np.float64]"] = []
    observed_nan = _ObservedNaN(layout)
    for i, x in enumerate(X):
        try:
            a = np.array(_to_numpy(x), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("X[%d] must be a 2-D array %s (layout=%r); got %s (%s)"
                            % (i, shape, layout, type(x).__name__, exc)) from None
        if a.ndim != 2:
            raise ValueError("X[%d] has shape %s: each array of a list X is one instance, %s (layout=%r)"
                             % (i, a.shape, shape, layout))
        if mask is not None:
            m = _as_mask(mask[i], a.shape, "mask[%d]" % i, "X[%d]" % i)
            observed_nan.add(a, m, (i,))
            a[~m] = np.nan
        if layout == "nld":
            a = a.T
        if a.shape[1] == 0:
            raise ValueError("X[%d] has no timesteps (shape %s, layout=%r)" % (i, a.shape[::-1] if layout == "nld"
                                                                               else a.shape, layout))
        if a.shape[0] != (seqs[0].shape[0] if seqs else a.shape[0]):
            raise ValueError("X[%d] has %d features but X[0] has %d: each array of a list X is %s (layout=%r), with "
                             "the same features" % (i, a.shape[0], seqs[0].shape[0], shape, layout))
        if a.shape[0] == 0:
            raise ValueError("X[%d] has no features (layout=%r)" % (i, layout))
        seqs.append(a)
    observed_nan.warn("mask", "X", 5)
    d, length = seqs[0].shape[0], max(a.shape[1] for a in seqs)
    out = np.full((len(seqs), d, length), np.nan)
    for i, a in enumerate(seqs):
        n = a.shape[1]
        if alignment == "start":
            out[i, :, :n] = a
        else:
            out[i, :, length - n:] = a
    return out


def as_data(X: Any, layout: str = "ndl", feature_names: Optional[Sequence[Any]] = None, alignment: str = "start",
            mask: Any = None, columns: Optional[Columns] = None) -> Data:
    """X as tempora's (instances, features, timesteps) float64 array, with
    NaN for missing values, and its feature names. See tempora.explain for
    the accepted forms; columns names a DataFrame's columns. It converts,
    and refuses only what it cannot convert: whether the data is fit to
    explain is the program's decision (tempora.as_array asks it)."""
    if layout not in LAYOUTS:
        raise ValueError("layout must be 'ndl' (instances, features, timesteps) or 'nld' (instances, timesteps, "
                         "features), got %r" % (layout,))
    alignment = _check_alignment(alignment)
    if _is_dataframe(X):
        if mask is not None:
            raise ValueError("mask: a DataFrame X marks its missing values itself (NaN values, or rows left out); "
                             "mask applies to an array or a list of arrays")
        data = _from_dataframe(X, feature_names, columns)
        data.alignment = alignment
        return data
    if columns is not None and columns.named():
        raise ValueError("instance_col=, time_col=, feature_col= and value_col= name the columns of a DataFrame X; "
                         "X is a %s" % type(X).__name__)
    shape = "(instances, features, timesteps)" if layout == "ndl" else "(instances, timesteps, features)"
    source, lengths = "array", None
    if _is_sequence_list(X):
        Xa = _from_list(X, layout, alignment, mask)
        source, lengths = "list", [_from_list_len(X, i, layout) for i in range(len(X))]
    else:
        try:
            Xa = np.asarray(_to_numpy(X), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("X must be a NumPy array of shape (instances, features, timesteps), a PyTorch tensor, a "
                            "list of per-instance 2-D arrays or a pandas DataFrame; got %s (%s)"
                            % (type(X).__name__, exc)) from None
        if Xa.ndim != 3:
            raise ValueError("X must have shape %s (layout=%r); got %s" % (shape, layout, Xa.shape))
        if mask is not None:
            m = _as_mask(mask, Xa.shape, "mask", "X")
            observed_nan = _ObservedNaN(layout)
            observed_nan.add(Xa, m, ())
            observed_nan.warn("mask", "X", 4)
            Xa = np.where(m, Xa, np.nan)  # a copy: X stays as it is
        if layout == "nld":
            Xa = Xa.transpose(0, 2, 1)
    Xa = np.ascontiguousarray(Xa)
    names = None
    if feature_names is not None:
        names = [str(n) for n in feature_names]
    return Data(Xa, _has_nan(Xa), names, None, layout, alignment, source=source, lengths=lengths)


def _from_list_len(X: Sequence[Any], i: int, layout: str) -> int:
    """The number of timesteps of instance i of a list X."""
    shape = np.shape(_to_numpy(X[i]))
    return int(shape[1] if layout == "ndl" else shape[0])


def _from_dataframe(df: Any, feature_names: Optional[Sequence[Any]], given: Optional[Columns] = None) -> Data:
    """A wide DataFrame (rows indexed by (instance, time), one column per
    feature), or a long one (columns instance, time, feature, value; or
    instance, time and one column per feature), its columns named by given
    (the defaults of Columns for None)."""
    import pandas as pd

    given = given if given is not None else Columns()
    df = _levels_as_columns(df, given)
    if isinstance(df.index, pd.MultiIndex) and not given.named():
        if df.index.nlevels != 2:
            raise ValueError("X: a wide DataFrame needs a MultiIndex of two levels (instance, time) on its rows; "
                             "got %d levels" % df.index.nlevels)
        level = df.index.names
        wide, fcol = df, None
        names_of = given.resolved(INSTANCE if level[0] is None else level[0], TIME if level[1] is None else level[1])
    else:
        inst, tcol = _key_columns(df, given)
        names_of = given.resolved(inst, tcol)
        fcol, vcol = _value_columns(df, given)
        if fcol is not None and vcol is not None:
            wide = _long_to_wide(df, inst, tcol, fcol, vcol)
        else:
            for c in (inst, tcol):
                if df[c].isna().any():
                    raise ValueError("X: the DataFrame's %s column has missing values (row %r)"
                                     % (c, df.index[df[c].isna().to_numpy()][0]))
            wide = df.set_index([inst, tcol])
    if fcol is None:
        wide = _sorted_columns(wide, feature_names is None)
    if wide.index.has_duplicates:
        raise ValueError("X: the DataFrame has more than one row for (instance, time) = %r"
                         % (wide.index[wide.index.duplicated()][0],))
    names = [str(c) for c in wide.columns]
    names_from = "X's columns"
    if feature_names is not None:
        want = [str(n) for n in feature_names]
        names_from = "feature_names"
        missing = [n for n in want if n not in names]
        if missing:
            raise ValueError("feature_names: %s are not columns of X (its features are %s)" % (missing, names))
        wide = wide[[wide.columns[names.index(n)] for n in want]]
        names = want
    nonnum = [str(c) for c in wide.columns if not pd.api.types.is_numeric_dtype(wide[c])]
    if nonnum:
        raise ValueError("X: the features %s are not numeric" % nonnum)
    instances = sorted(wide.index.get_level_values(0).unique())
    times = _ordered_times(wide.index.get_level_values(1), names_of.time)
    _warn_time_stamps(wide, len(instances), len(times))
    full = pd.MultiIndex.from_product([instances, times])
    values = wide.reindex(full).to_numpy(dtype=np.float64)
    Xa = np.ascontiguousarray(values.reshape(len(instances), len(times), len(names)).transpose(0, 2, 1))
    data = Data(Xa, _has_nan(Xa), names, list(instances), "ndl", times=list(times), source="frame",
                names_from=names_from)
    data.columns = names_of
    return data


def _sorted_columns(wide: Any, warn: bool) -> Any:
    """A frame of one column per feature with its columns in sorted order,
    the order of a long frame's features. warn: say so when the columns
    were in another order, which a model trained on them may expect."""
    order = _unique(np.asarray(list(wide.columns), dtype=object))
    if order != list(wide.columns):
        if warn:
            warnings.warn("X: tempora takes a DataFrame's features in the sorted order of their names, wide or long, "
                          "so the model receives %s, not the column order %s; if it expects the column order, pass "
                          "feature_names=%s (which also silences this warning)"
                          % (_shorten([str(c) for c in order]), _shorten([str(c) for c in wide.columns]),
                             _shorten([str(c) for c in wide.columns])), UserWarning, stacklevel=5)
        wide = wide[order]
    return wide


def _levels_as_columns(df: Any, given: Columns) -> Any:
    """df with the levels of its row index that are its instance or time
    (as given names them, else the default names; and that are not columns
    already) made columns, when the caller named any column: a frame
    indexed by (stay, hour) is read with instance_col="stay"."""
    if not given.named():
        return df  # a MultiIndex is a wide frame's (instance, time), by position
    levels = [n for n in df.index.names if n is not None]
    want = [INSTANCE if given.instance is None else given.instance]
    want += list(_TIME_NAMES) if given.time is None else [given.time]
    move = [n for n in levels if any(_same(n, w) for w in want) and not any(_same(c, n) for c in df.columns)]
    return df.reset_index(level=move) if move else df


def _same(label: Any, name: Any) -> bool:
    """Whether a column label is the name given for it (as given, or as
    text: column 1 is named 1 or "1")."""
    return bool(label == name) or str(label) == str(name)


def _column(df: Any, name: Any) -> Any:
    """The label of df's column named name, or None."""
    return next((c for c in df.columns if _same(c, name)), None)


def _not_a_column(keyword: str, name: Any, df: Any) -> ValueError:
    index = [n for n in df.index.names if n is not None]
    return ValueError("%s=%r is not a column of X%s; its columns are %s"
                      % (keyword, name, " nor a level of its index %s" % index if index else "",
                         [str(c) for c in df.columns]))


def _key_columns(df: Any, given: Columns) -> Tuple[Any, Any]:
    """The labels of df's instance and time columns: those given named,
    else instance and time (or timestep); an error names what is missing."""
    if given.instance is not None:
        inst = _column(df, given.instance)
        if inst is None:
            raise _not_a_column("instance_col", given.instance, df)
    else:
        inst = _column(df, INSTANCE)
    if given.time is not None:
        tcol = _column(df, given.time)
        if tcol is None:
            raise _not_a_column("time_col", given.time, df)
    else:
        tcol = next((c for c in (_column(df, t) for t in _TIME_NAMES) if c is not None), None)
    if inst is None or tcol is None:
        raise ValueError("X: a DataFrame must be wide (rows indexed by a MultiIndex (instance, time), one column "
                         "per feature) or long (columns instance, time, feature, value; or instance, time and one "
                         "column per feature; instance_col=, time_col=, feature_col= and value_col= name others); "
                         "got columns %s and a %s index" % ([str(c) for c in df.columns], type(df.index).__name__))
    return inst, tcol


def _value_columns(df: Any, given: Columns) -> Tuple[Any, Any]:
    """The labels of a long df's feature and value columns, or (None, None)
    for a frame of one column per feature. A column given by name must
    exist, and so must its partner."""
    fcol = _column(df, given.feature if given.feature is not None else FEATURE)
    vcol = _column(df, given.value if given.value is not None else VALUE)
    if given.feature is not None and fcol is None:
        raise _not_a_column("feature_col", given.feature, df)
    if given.value is not None and vcol is None:
        raise _not_a_column("value_col", given.value, df)
    if given.feature is not None and vcol is None:
        raise ValueError("feature_col=%r: X has no column %r for the long DataFrame's values; name it with value_col="
                         % (given.feature, VALUE))
    if given.value is not None and fcol is None:
        raise ValueError("value_col=%r: X has no column %r for the long DataFrame's feature names; name it with "
                         "feature_col=" % (given.value, FEATURE))
    if fcol is None or vcol is None:
        return None, None
    return fcol, vcol


def _long_to_wide(df: Any, inst: Any, tcol: Any, fcol: Any, vcol: Any) -> Any:
    """A long frame as a wide one: rows (instance, time), one column per
    feature in sorted order (a categorical feature column: its categories'
    order), NaN for an (instance, time, feature) without a row."""
    import pandas as pd

    key = [inst, tcol, fcol]
    extra = [str(c) for c in df.columns if c not in (inst, tcol, fcol, vcol)]
    if extra:
        raise ValueError("X: a long DataFrame has the columns %s, %s, %s, %s; it also has %s"
                         % (inst, tcol, fcol, vcol, ", ".join(extra)))
    for c in key:
        if df[c].isna().any():
            raise ValueError("X: the long DataFrame's %s column has missing values (row %r)"
                             % (c, df.index[df[c].isna().to_numpy()][0]))
    dup = df.duplicated(key, keep=False).to_numpy()
    if dup.any():
        first = df[dup].iloc[0]
        count = int(((df[inst] == first[inst]) & (df[tcol] == first[tcol]) & (df[fcol] == first[fcol])).sum())
        raise ValueError("X: the long DataFrame has %d rows for (%s, %s, %s) = %r; each needs at most one (leave a "
                         "missing value out, or give it as NaN)"
                         % (count, inst, tcol, fcol, (first[inst], first[tcol], first[fcol])))
    if isinstance(df[fcol].dtype, pd.CategoricalDtype):
        present = set(df[fcol])
        order = [c for c in df[fcol].cat.categories if c in present]
    else:
        order = _unique(df[fcol].to_numpy())  # whatever the order of the rows or the rows left out
    wide = df.pivot(index=[inst, tcol], columns=fcol, values=vcol)
    return wide[order]


def _shorten(values: List[Any], k: int = 8) -> str:
    return "[%s%s]" % (", ".join(repr(v) for v in values[:k]), ", ..." if len(values) > k else "")


#: A time label of one number between a text before and a text after it
#: ("1h", "t10", "-3", "day 2.5"): such labels sharing the texts are
#: ordered by their number.
_NUMBER_LABEL = re.compile(r"^(\D*?)([-+]?\d+(?:\.\d+)?)(\D*)$")
_DIGITS = re.compile(r"(\d+)")


def _ordered_times(level: Any, name: Any) -> List[Any]:
    """The distinct time labels of a frame's time column or index level in
    the order of time: numbers, datetimes and durations as they compare,
    an ordered categorical in its categories' order, text of one number
    between a shared text before and after it ("1h", "2h", "10h") by that
    number. Any other labels (text of several numbers or none, units that
    differ, types that do not compare) are put in natural order (the
    numbers within the text as numbers) with a warning naming them."""
    import pandas as pd

    if isinstance(level.dtype, pd.CategoricalDtype) and level.dtype.ordered:
        present = set(level)
        return [c for c in level.categories if c in present]
    values = level.unique().tolist()
    if not all(isinstance(v, str) for v in values):
        try:
            return sorted(values)
        except TypeError:
            pass  # types that do not compare: ordered as text below, with the warning
    else:
        parts = [_NUMBER_LABEL.match(v) for v in values]
        if all(p is not None for p in parts) and len({(p.group(1), p.group(3)) for p in parts if p}) == 1:
            return [v for _, v in sorted((float(p.group(2)), v) for p, v in zip(parts, values) if p)]
    out = sorted(values, key=_natural)
    warnings.warn("X: the time labels of the %s column are text that cannot be ordered reliably (%s): they are taken "
                  "in natural order (numbers within the text compared as numbers), %s; give the times as numbers or "
                  "datetimes, or as an ordered pandas Categorical in the order of time"
                  % (name, "types that do not compare" if not all(isinstance(v, str) for v in values)
                     else "not one number with the same text around it", _shorten(out)),
                  UserWarning, stacklevel=5)
    return out


def _natural(v: Any) -> Tuple[Any, ...]:
    """The natural-order key of a label: its text with each run of digits
    compared as a number (then the text itself, for labels that tie)."""
    s = str(v)
    chunks = tuple(int(c) if i % 2 else c for i, c in enumerate(_DIGITS.split(s)))  # text, number, text, ...
    return chunks, s


def _warn_time_stamps(wide: Any, instances: int, times: int) -> None:
    """Warn when the times look like per-instance time stamps rather than
    aligned steps."""
    # An (instance, time) without a row is missing in every feature: the
    # times are the union of all instances' times (aligned time), so a
    # shorter sequence is NaN where it has no times.
    per_instance = wide.index.get_level_values(0).value_counts()
    if times > 2 * int(per_instance.max()) and len(wide) < 0.25 * instances * times:
        # Time stamps of their own per instance: the union makes a long,
        # mostly empty axis on which few instances share a length.
        warnings.warn(
            "X: the DataFrame has %d distinct times but no instance has more than %d: the time axis is the union "
            "of all instances' times, so each sequence is mostly missing (%.0f%% of the (instance, time) cells "
            "have a row) and few instances share a length, which costs the tests power and the model time. If "
            "the times are time stamps rather than aligned steps, bin them (e.g. df['time'] = df['time'] // 1 "
            "for whole hours, then one row per (instance, time, feature), e.g. the mean)"
            % (times, int(per_instance.max()), 100.0 * len(wide) / (instances * times)),
            UserWarning, stacklevel=5)


def as_targets(y: Any, task: str, n: int, instances: Optional[List[Any]],
               classes: Optional[Sequence[Any]] = None) -> Tuple["npt.NDArray[np.float64]", Optional[Tuple[Any, Any]]]:
    """y as float targets, and for classification with labels other than
    0/1 the (negative, positive) labels. A pandas Series is aligned with a
    DataFrame X by its index (the instance ids). n is X's number of
    instances, for messages: whether there is one finite target per
    instance is the program's decision."""
    if _is_series(y) and instances is not None:
        missing = [i for i in instances if i not in y.index]
        if missing:
            raise ValueError("y: the Series has no target for the instances %s of X" % missing[:5])
        y = y.loc[instances]
    y = _to_numpy(y)
    ya = np.asarray(y)
    if ya.ndim == 2 and ya.shape[1] == 1:
        ya = ya.reshape(-1)
    if ya.ndim != 1:  # a vector is what the program reads; its length is the program's to check
        raise ValueError("y must have one target per instance of X, shape (%d,); got %s" % (n, ya.shape))
    if task == "regression":
        if classes is not None:
            raise ValueError("classes= applies to task='classification' only")
        try:
            out = ya.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("y: task='regression' needs numbers; got values such as %r" % (ya[0],)) from None
        return np.ascontiguousarray(out), None
    labels: List[Any]
    if classes is not None:
        labels = list(classes)
        if len(labels) != 2 or labels[0] == labels[1]:
            raise ValueError("classes must be two labels (negative, positive); got %r" % (classes,))
        bad = [v for v in _unique(ya) if v not in labels]
        if bad:
            raise ValueError("y holds labels %s that are not in classes=%r" % (bad[:5], list(classes)))
    else:
        labels = _unique(ya)
        if ya.dtype.kind in "biuf" and all(v in (0, 1) for v in labels):
            return np.ascontiguousarray(ya.astype(np.float64)), None  # already 0/1
        if len(labels) != 2:
            raise ValueError("y: task='classification' is binary: y needs exactly two labels (or 0/1 values); got "
                             "%d: %s" % (len(labels), labels[:10]))
    pos = labels[1]
    out = np.fromiter((1.0 if v == pos else 0.0 for v in ya.tolist()), dtype=np.float64, count=len(ya))
    return out, (labels[0], labels[1])


def _unique(a: "npt.NDArray[Any]") -> List[Any]:
    """The distinct values of a, sorted (by their text when they do not
    compare)."""
    vals = list(dict.fromkeys(a.tolist()))
    try:
        return sorted(vals)
    except TypeError:
        return sorted(vals, key=lambda v: (type(v).__name__, str(v)))


class Adapted:
    """A predict function for the program's batches, made from a model as
    the caller has it. Module-level and holding only the model, so that it
    pickles when the model does (model_procs > 1). outputs is the number of
    outputs of a model with several (its answers are checked and shaped
    (m, outputs)), or 0 for a model with one output."""

    def __init__(self, model: Any, kind: str, layout: str, task: str, positive: int, outputs: int = 0,
                 rows: str = "") -> None:
        self.model, self.kind, self.layout, self.task, self.positive = model, kind, layout, task, positive
        self.outputs = outputs
        self.rows = rows  # how a model that states its row width takes batches (_stated.rows)

    def __call__(self, batch: "npt.NDArray[np.float64]") -> Any:
        x: Any = batch.transpose(0, 2, 1) if self.layout == "nld" else batch
        if self.rows == _stated.FLAT:
            x = x.reshape(len(x), -1)  # X.reshape(len(X), -1) in the caller's layout
        if self.rows == _stated.ARRAYS:
            try:
                out = self._invoke(x)
            except Exception as exc:
                raise _stated.arrays_failed(_stated.row_width(self.model) or 0, x.shape, self.layout, exc) from exc
        else:
            out = self._invoke(x)
        out = _to_numpy(out)
        if self.outputs:
            return shaped(out, len(batch), self.outputs)
        if self.task == "classification":
            a = np.asarray(out)
            if a.ndim == 2 and a.shape[1] == 2:
                return a[:, self.positive]
        return out

    def _invoke(self, x: Any) -> Any:
        """The model's answer for the batch x, as it gives it."""
        if self.kind == "torch":
            import torch
            p = next(iter(self.model.parameters()), None)
            # torch.tensor copies: the batch is read-only, which
            # torch.as_tensor would share (with a warning) for a float64 model.
            t = torch.tensor(np.ascontiguousarray(x), dtype=p.dtype if p is not None else torch.float32,
                             device=p.device if p is not None else None)
            with torch.no_grad():
                out = self.model(t)
            if isinstance(out, (tuple, list)):
                out = out[0]
            out = out.detach().cpu().numpy()
        elif self.kind == "keras":
            out = self.model.predict(x, verbose=0)
        elif self.kind == "predict_proba":
            out = self.model.predict_proba(x)
        elif self.kind == "predict":
            out = self.model.predict(x)
        else:
            out = self.model(x)
        return out


def shaped(out: Any, m: int, k: int) -> "npt.NDArray[np.float64]":
    """A model's answer for m instances of k outputs as an (m, k) array:
    (m, k) as it is, (m, k, 1) (a sequence model's one value per step)
    and, for k = 1, (m,) reshaped."""
    a = np.asarray(_to_numpy(out), dtype=np.float64)
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.ndim == 1 and k == 1:
        a = a.reshape(-1, 1)
    if a.shape != (m, k):
        raise ValueError("predict returned an array of shape %s for a batch of %d instances; the model has %d outputs, "
                         "want (%d, %d)%s" % (a.shape, m, k, m, k,
                                              " (or (%d, %d, 1))" % (m, k) if k > 1 else ""))
    return a


def _positive_column(model: Any, labels: Optional[Tuple[Any, Any]]) -> int:
    """The column of the positive class in predict_proba's answer: that of
    the positive label in the model's classes_ when it has them."""
    owner = getattr(model, "__self__", model)
    known = getattr(owner, "classes_", None)
    if known is None:
        return 1
    known = list(np.asarray(known).tolist())
    pos = labels[1] if labels is not None else 1
    if len(known) != 2 or pos not in known:
        raise ValueError("predict: the model's classes_ %s do not hold the positive class %r of y" % (known, pos))
    return int(known.index(pos))


def as_predict(model: Any, task: str, layout: str, labels: Optional[Tuple[Any, Any]], outputs: int = 0,
               shape: Optional[Tuple[int, int]] = None, source: str = "array") -> Any:
    """A predict function of the program's (m, D, L) batches for model: a
    function, a scikit-learn estimator or its bound predict/predict_proba, a
    PyTorch module, or a Keras-style model. outputs is the number of
    outputs of a model with several, 0 for one output. shape is X's
    (features, timesteps) and source its form (Data.source): where the
    model states its input (_stated), X is checked against it, and an
    estimator of rows of features × timesteps values is given each
    instance flattened."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(model, torch.nn.Module):
        if shape is not None:
            _stated.check_layout(model, shape[0], shape[1], layout, source)
        training = _stated.training_modules(model)
        if training:
            warnings.warn("predict: the PyTorch module is in training mode, where dropout and batch normalisation "
                          "make its predictions depend on the batch; call model.eval() before explaining it (in "
                          "training mode: %s)" % ", ".join(training[:5] + (["..."] if len(training) > 5 else [])),
                          RuntimeWarning, stacklevel=3)
        return Adapted(model, "torch", layout, task, 1, outputs)
    mod = type(model).__module__ or ""
    if mod.split(".")[0] in ("keras", "tensorflow", "tf_keras") and hasattr(model, "predict"):
        return Adapted(model, "keras", layout, task, 1, outputs)
    rows = _stated.rows(model, shape[0], shape[1], layout, source) if shape is not None else ""
    if not callable(model):
        if task == "classification" and hasattr(model, "predict_proba"):
            positive = 1 if outputs else _positive_column(model, labels)
            return Adapted(model, "predict_proba", layout, task, positive, outputs, rows)
        if hasattr(model, "predict"):
            return Adapted(model, "predict", layout, task, 1, outputs, rows)
        raise TypeError("predict must be a function of a batch, an object with predict_proba or predict "
                        "(scikit-learn, Keras) or a PyTorch module; got %s" % type(model).__name__)
    positive = 1
    if getattr(model, "__name__", "") == "predict_proba" and not outputs:
        positive = _positive_column(model, labels)
    if layout == "ndl" and task == "regression" and not outputs and not rows:
        return model  # called as is: the batch is already in the caller's layout
    return Adapted(model, "call", layout, task, positive, outputs, rows)
