"""Models with several outputs, on the way in: what the outputs are (the
outputs= keyword, inferred where that is safe), their targets in the forms
Python users have them, and the model's answers in the shape the program
reads.

A model may return K numbers per instance: the probabilities of K ≥ 3
classes (scikit-learn's predict_proba), K forecast horizons, or one value
per output step of a sequence-to-sequence model (docs/decisions.md,
decision 24). The program is told with ``-outputs KIND:K`` (and
``-output-names``, ``-output-anchors``) and reads the targets as one label
per instance (classes) or K values per instance, NaN where an output has
no target. Whether targets and predictions are fit to explain is the
program's decision; this module converts, and refuses only what it cannot
convert or what is ambiguous.
"""

import json
import os
import sys
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from ._input import INSTANCE, VALUE, Data, _column, _is_dataframe, _is_series, _to_numpy, _unique

#: The kinds of outputs (the program's -outputs), as explain's outputs= takes them.
KINDS = ("classes", "horizons", "steps")

#: The column of a long targets DataFrame that names the output.
OUTPUT = "output"

_WHAT = ("outputs='horizons' (K forecasts after the sequence, output k at timestep L+k) or outputs='steps' (a "
         "sequence-to-sequence model, output s at input timestep s)")


class Spec:
    """What the outputs of a model with several outputs are: their kind,
    number K, names (None for the program's "0", "1", ...) and anchors on
    the input's time axis (None for the kind's default); for classes, the
    K labels in the order of the model's columns."""

    def __init__(self, kind: str, k: int, names: Optional[List[str]] = None, anchors: Optional[List[int]] = None,
                 labels: Optional[List[Any]] = None) -> None:
        self.kind, self.k, self.names, self.anchors, self.labels = kind, k, names, anchors, labels

    def flags(self, names_path: Optional[str]) -> List[str]:
        """The program's flags for these outputs; names_path is the file
        holding the names (write_names)."""
        args = ["-outputs", "%s:%d" % (self.kind, self.k)]
        if self.names is not None and names_path is not None:
            args += ["-output-names", names_path]
        if self.anchors is not None:
            args += ["-output-anchors", ",".join(str(a) for a in self.anchors)]
        return args

    def write_names(self, tmp: str) -> Optional[str]:
        """Write the names for -output-names (a JSON array, which carries
        any name exactly) into tmp; its path, or None without names."""
        if self.names is None:
            return None
        path = os.path.join(tmp, "output-names.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.names, f)
        return path

    def output_value(self, key: Any) -> str:
        """An output as the program's output parameter takes it: an int is
        the output's position (as captum's target), given by its name when
        the outputs have names, so that a name that is also a number (a
        class label 2) cannot be read as another output's position; a
        string is a name."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            k = int(key)
            if not 0 <= k < self.k:
                raise ValueError("output=%d: the model has %d outputs, 0 to %d" % (k, self.k, self.k - 1))
            return self.names[k] if self.names is not None else str(k)
        return str(key)


def model_classes(model: Any) -> Optional[List[Any]]:
    """The classes_ of a model called through predict_proba (an estimator
    or its bound predict_proba): the labels of its columns, in order."""
    owner = getattr(model, "__self__", model)
    if not (hasattr(owner, "predict_proba") or getattr(model, "__name__", "") == "predict_proba"):
        return None
    known = getattr(owner, "classes_", None)
    return None if known is None else list(np.asarray(known).tolist())


def targets(y: Any, task: str, data: Data, classes: Optional[Sequence[Any]], outputs: Optional[str],
            output_names: Optional[Sequence[Any]], output_anchors: Optional[Sequence[int]],
            model: Any) -> Tuple[Any, Optional[Spec]]:
    """y as the targets of a model with several outputs and what its
    outputs are; or, for a model with one output, (y, None), y to be read
    as ever (_input.as_targets; a DataFrame's one column as a Series).
    outputs is explain's outputs= ("classes", "horizons", "steps" or None:
    inferred where safe)."""
    if outputs is not None and outputs not in KINDS:
        raise ValueError("outputs must be 'classes', 'horizons' or 'steps' (or None: one output, or classes inferred "
                         "from a classifier's predict_proba or from y's labels), got %r" % (outputs,))
    labels_of: Optional[List[Any]] = None
    one = y
    if _is_dataframe(y):
        ya, labels_of, anchors_of = _frame(y, data, outputs)
        if ya.shape[1] == 1:
            one = ya.reshape(-1)  # in X's order
    else:
        if _is_series(y) and data.instances is not None:
            missing = [i for i in data.instances if i not in y.index]
            if missing:
                raise ValueError("y: the Series has no target for the instances %s of X" % missing[:5])
            y = y.loc[data.instances]
        ya = np.asarray(_to_numpy(y))
        anchors_of = None
    if ya.ndim == 1 or (ya.ndim == 2 and ya.shape[1] == 1 and outputs in (None, "classes")):
        ya = ya.reshape(-1)
        if task == "classification" and outputs in (None, "classes"):
            _no_missing_labels(ya, data)
        if outputs is None and task == "classification" and _class_count(model, classes, ya) >= 3:
            outputs = "classes"
        if outputs is None:
            return one, None  # one output, as ever
        if outputs == "classes":
            return _classes(ya, task, model, classes, output_names)
        ya = ya.reshape(-1, 1)  # one horizon, or one output step
    if ya.ndim != 2:
        raise ValueError("y must have one target per instance of X, shape (%d,), or one per instance and output, "
                         "(%d, outputs); got %s" % (data.X.shape[0], data.X.shape[0], ya.shape))
    if outputs is None:
        raise ValueError("y has %d columns, one per output: say what the outputs are, %s" % (ya.shape[1], _WHAT))
    if outputs == "classes":
        raise ValueError("outputs='classes' takes one class label per instance; y has %d columns (for one-hot "
                         "targets pass their labels, e.g. y.argmax(axis=1))" % ya.shape[1])
    if classes is not None:
        raise ValueError("classes= applies to class labels (outputs='classes', or task='classification' with one "
                         "output); the outputs are %s" % outputs)
    try:
        ya = ya.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("y: the targets of %s must be numbers (NaN: no target); got values such as %r"
                         % (outputs, ya.flat[0])) from None
    k = ya.shape[1]
    names = _names(output_names, k, labels_of)
    anchors = _anchors(output_anchors, k, outputs)
    if anchors is None and outputs == "steps" and anchors_of is not None:
        anchors = anchors_of
    return np.ascontiguousarray(ya, dtype=np.float64), Spec(outputs, k, names, anchors)


def _missing(ya: "npt.NDArray[Any]") -> "npt.NDArray[np.bool_]":
    """Where the labels ya are missing: NaN, None (and pandas' NA, NaT)."""
    pd = sys.modules.get("pandas")
    if pd is not None:
        out: "npt.NDArray[np.bool_]" = np.asarray(pd.isna(ya), dtype=bool)
        return out
    if ya.dtype.kind in "fc":
        nan: "npt.NDArray[np.bool_]" = np.isnan(ya)
        return nan
    if ya.dtype.kind != "O":
        return np.zeros(ya.shape, dtype=bool)
    return np.fromiter((v is None or (isinstance(v, float) and v != v) for v in ya.tolist()), dtype=bool,
                       count=len(ya))


def _no_missing_labels(ya: "npt.NDArray[Any]", data: Data) -> None:
    """Refuse class labels with missing values: a missing label is not a
    class, and a target may not be missing (one per instance; only the
    targets of horizons and steps have NaN for no target)."""
    miss = _missing(ya)
    if not miss.any():
        return
    i = int(np.argmax(miss))
    at = "instance %r" % (data.instances[i],) if data.instances is not None else "index (%d,)" % i
    raise ValueError("y holds %d missing class labels (NaN or None; the first at %s): a missing label is not a class, "
                     "and task='classification' needs a label for every instance. Leave those instances out of X "
                     "and y (e.g. keep = ~np.isnan(y); X[keep], y[keep])" % (int(miss.sum()), at))


def _class_count(model: Any, classes: Optional[Sequence[Any]], ya: "npt.NDArray[Any]") -> int:
    """How many classes a classifier has: classes= if given, else the
    model's classes_ (predict_proba's columns), else y's labels."""
    if classes is not None:
        return len(list(classes))
    known = model_classes(model)
    if known is not None:
        return len(known)
    return len(_unique(ya))


def _classes(ya: "npt.NDArray[Any]", task: str, model: Any, classes: Optional[Sequence[Any]],
             output_names: Optional[Sequence[Any]]) -> Tuple["npt.NDArray[np.float64]", Spec]:
    """Labels as the positions of their classes: classes= (in the model's
    column order), else the model's classes_, else y's labels sorted."""
    if task != "classification":
        raise ValueError("outputs='classes' needs task='classification' (the model returns class probabilities), "
                         "got task=%r" % (task,))
    known = model_classes(model)
    if classes is not None:
        labels = list(classes)
        if known is not None and known != labels:
            raise ValueError("classes=%r differ from the model's classes_ %r, the order of predict_proba's columns"
                             % (labels, known))
        where = "classes="
    elif known is not None:
        labels, where = known, "the model's classes_"
    else:
        labels, where = _unique(ya), "y's labels"
    if len(set(map(repr, labels))) != len(labels):
        raise ValueError("classes: %s hold a label twice: %r" % (where, labels))
    if len(labels) < 3:
        raise ValueError("outputs='classes' needs 3 or more classes; %s give %d (%r). Two classes are one output, "
                         "the probability of the second: leave outputs= out" % (where, len(labels), labels))
    position = {repr(v): c for c, v in enumerate(labels)}
    bad = [v for v in _unique(ya) if repr(v) not in position]
    if bad:
        raise ValueError("y holds labels %s that are not among the classes %r (%s)" % (bad[:5], labels, where))
    out = np.fromiter((position[repr(v)] for v in ya.tolist()), dtype=np.float64, count=len(ya))
    names = _names(output_names, len(labels), [str(v) for v in labels])
    return out, Spec("classes", len(labels), names, None, labels)


def _names(given: Optional[Sequence[Any]], k: int, default: Optional[List[Any]]) -> Optional[List[str]]:
    """The outputs' names: output_names= if given, else those the targets
    or the classes bring (None: the program's "0", "1", ...)."""
    if given is None:
        return None if default is None else [str(v) for v in default]
    names = [str(v) for v in given]
    if len(names) != k:
        raise ValueError("output_names has %d names for %d outputs" % (len(names), k))
    return names


def _anchors(given: Optional[Sequence[int]], k: int, kind: str) -> Optional[List[int]]:
    if given is None:
        return None
    out = []
    for a in given:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise TypeError("output_anchors must be ints (each output's timestep on the input's time axis); got %r"
                            % (a,))
        out.append(int(a))
    if len(out) != k:
        raise ValueError("output_anchors has %d anchors for %d outputs" % (len(out), k))
    return out


def _frame(df: Any, data: Data, outputs: Optional[str]) -> Tuple["npt.NDArray[Any]", List[Any], Optional[List[int]]]:
    """The targets of a DataFrame: long (columns instance, output, value;
    an (instance, output) without a row has no target) or wide (indexed by
    instance, or with an instance column, one column per output). The
    instance and value columns are named as in X (instance_col=,
    value_col=). Returns the (instances, outputs) values, the outputs'
    labels, and for labels that are all times of a DataFrame X, their
    timesteps (the anchors of output steps)."""
    import pandas as pd

    named = data.columns
    inst_name = INSTANCE if named.instance is None else named.instance
    inst = _column(df, inst_name)
    out, val = _column(df, OUTPUT), _column(df, VALUE if named.value is None else named.value)
    cols = [str(c) for c in df.columns]
    if out is not None and val is not None:
        extra = [str(c) for c in df.columns if c not in (inst, out, val)]
        if inst is None or extra:
            raise ValueError("y: a long targets DataFrame has the columns %s, %s, %s; got %s"
                             % (inst_name, OUTPUT, val, cols))
        if df.duplicated([inst, out]).any():
            first = df[df.duplicated([inst, out], keep=False)].iloc[0]
            raise ValueError("y: the long DataFrame has more than one row for (%s, %s) = %r"
                             % (inst_name, OUTPUT, (first[inst], first[out])))
        if isinstance(df[out].dtype, pd.CategoricalDtype):
            order = [c for c in df[out].cat.categories if c in set(df[out])]
        else:
            order = _unique(df[out].to_numpy())
        wide = df.pivot(index=inst, columns=out, values=val)[order]
        ids = list(wide.index)
        if data.instances is not None:
            wide = wide.reindex(data.instances)  # an instance without a row has no target (the program says)
        elif ids != list(range(data.X.shape[0])):
            raise ValueError("y: with an array X the long targets' instances are X's positions 0 to %d; got %s"
                             % (data.X.shape[0] - 1, ids[:5] + (["..."] if len(ids) > 5 else [])))
    else:
        wide = df
        if data.instances is not None:
            if inst is not None:
                wide = df.set_index(inst)  # keyed by its instance column
            missing = [i for i in data.instances if i not in wide.index]
            if missing:
                raise ValueError("y: the DataFrame has no row for the instances %s of X" % missing[:5])
            wide = wide.loc[data.instances]
    labels = list(wide.columns)
    values = wide.to_numpy()
    anchors = None
    if data.times is not None and labels and all(v in data.times for v in labels):
        anchors = [data.times.index(v) for v in labels]
    return values, labels, anchors
