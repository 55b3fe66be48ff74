"""The program's errors in the caller's terms.

The tempora program decides whether data is fit to explain (its data
rules, the alignment rule of decision 19 of docs/decisions.md, finite
targets, feature names) and, asked with ``-errors json``, reports what it
refuses as one JSON object: its kind and the instance, feature and timestep
of the data file at fault (docs/errors.md). This module turns that object
into an exception naming the argument of tempora.explain and the
DataFrame's instance ids, column names and time labels, or an array's
index in the caller's layout. It reads the object's fields only, never
the wording of the program's message.
"""

import math
import re
from typing import Any, Dict, Mapping, Optional, Tuple

from ._binary import ModelError, TemporaError
from ._input import Data

#: The argument of tempora.explain each data kind is about (docs/errors.md).
ARGUMENTS = {
    "shape": "X", "infinite": "X", "missing": "X", "unobserved-instance": "X", "unobserved-feature": "X",
    "alignment": "X", "targets": "y", "target": "y", "feature-names": "feature_names", "mask": "mask",
}

#: Kinds that are the model's failure.
MODEL_KINDS = ("model", "prediction")


class DataError(TemporaError, ValueError):
    """Data, targets or feature names the tempora program refused.

    Attributes (None where they do not apply):
        kind: what is wrong, the program's kind (docs/errors.md):
            "infinite", "unobserved-instance", "unobserved-feature",
            "alignment", "target", "targets", "feature-names", "shape", ...
        argument: the argument of tempora.explain at fault ("X", "y",
            "feature_names", "X's columns").
        instance: the instance at fault, as the caller names it (a
            DataFrame's id, else its index).
        feature: the feature at fault (its name, else its index).
        time: the time at fault (a DataFrame's time value, else the
            position in the caller's sequence).
        index: the cell's index in the caller's array (of X[i] for a list
            X), in the caller's layout; (i,) for a target.
        value: the value at fault.
        count: how many (infinite values, non-finite targets, instances
            ending early, names given).
        lengths: (shortest, longest) sequence, for kind "alignment".
        info: the program's error object as it reported it.

    A ValueError, as every error about the caller's arguments, and a
    TemporaError, as the program's refusal.
    """

    def __init__(self, message: str, info: Dict[str, Any], argument: str, instance: Any = None,
                 feature: Any = None, time: Any = None, index: Optional[Tuple[int, ...]] = None) -> None:
        super().__init__(message, info=info)
        self.argument, self.instance, self.feature, self.time, self.index = argument, instance, feature, time, index
        value = info.get("value")
        self.value: Optional[float] = float(value) if value is not None else None
        self.count: Optional[int] = info.get("count")
        lengths = info.get("lengths")
        self.lengths: Optional[Tuple[int, int]] = (int(lengths[0]), int(lengths[1])) if lengths else None


def _int(info: Mapping[str, Any], key: str) -> Optional[int]:
    v = info.get(key)
    return int(v) if v is not None else None


def program_error(message: str, info: Optional[Dict[str, Any]], data: Optional[Data] = None,
                  y_shape: Optional[Tuple[int, ...]] = None, outputs: Optional[Tuple[str, int]] = None,
                  keywords: Optional[Mapping[str, str]] = None) -> TemporaError:
    """The exception for the program's failure: its one-line message and
    its error object (None if it sent none). With data (X as written for
    the program) and y_shape (the caller's y's shape), a data kind becomes a
    DataError in the caller's terms and a prediction error names the
    DataFrame's instance; a model kind is a ModelError; anything else a
    TemporaError with the program's message. outputs is (kind, K) for a
    model with several outputs. keywords maps the flags the caller's
    keywords set to those keywords: a usage error (or any other that is
    not the data's or the model's) names them as the caller wrote them
    (alpha=1.5, not -alpha 1.5)."""
    kind = None if info is None else info.get("kind")
    if kind in MODEL_KINDS:
        return ModelError(_prediction_message(message, info, data) if info is not None else message, info=info)
    if info is not None and kind in ARGUMENTS and data is not None:
        return data_error(info, data, y_shape, outputs)
    return TemporaError(keyword_message(message, keywords or {}), info=info)


def keyword_message(message: str, keywords: Mapping[str, str]) -> str:
    """message with each flag of keywords as its keyword: "-max-batch -1"
    and "-max-batch=-1" become "max_batch=-1", a lone "-alpha"
    "alpha=". The flags are the program's names, which stand for
    themselves in its messages."""
    if not keywords:
        return message
    names = "|".join(re.escape(n) for n in sorted(keywords, key=len, reverse=True))
    return re.sub(r"(?<![\w-])-(%s)(?![\w-])[ =]?" % names, lambda mo: keywords[mo.group(1)] + "=", message)


def _prediction_message(message: str, info: Dict[str, Any], data: Optional[Data]) -> str:
    """The message of a model error, with the DataFrame's id of the
    instance a prediction error locates, and what a NumPy model usually
    does wrong when it predicts NaN on data with missing values."""
    extra = []
    i = _int(info, "instance")
    if info.get("kind") == "prediction" and data is not None and i is not None and data.instances is not None \
            and i < len(data.instances):
        extra.append("instance %d is X's instance %r (instances in sorted order)" % (i, data.instances[i]))
    value = info.get("value")
    if data is not None and data.missing and value is not None and math.isnan(float(value)):
        extra.append("predict must return a number for every instance, also where all it reads is missing "
                     "(np.nanmean of an all-NaN slice is NaN)")
    return "; ".join([message] + extra)


def data_error(info: Dict[str, Any], data: Data, y_shape: Optional[Tuple[int, ...]] = None,
               outputs: Optional[Tuple[str, int]] = None) -> DataError:
    """The DataError of a data kind, in the caller's terms (outputs: (kind,
    K) of a model with several outputs)."""
    kind = str(info.get("kind"))
    i, j, t = _int(info, "instance"), _int(info, "feature"), _int(info, "timestep")
    count = _int(info, "count")
    argument = ARGUMENTS.get(kind, "X")
    if kind == "feature-names":
        argument = data.names_from
    instance = data.instance(i) if i is not None else None
    feature = data.feature(j) if j is not None else None
    at_time = data.time(i, t) if i is not None and t is not None else None
    index = data.index(i, j, t) if i is not None and j is not None and t is not None else None
    m = data.X.shape[0]
    detail = str(info.get("detail") or info.get("message") or kind)
    if kind == "infinite" and i is not None and j is not None and t is not None:
        msg = ("X holds %d infinite values (the first at %s); a missing value is NaN, and infinities are errors"
               % (count or 1, data.cell(i, j, t)))
    elif kind == "missing" and i is not None and j is not None and t is not None:
        # The program's reason (which method, why, how much is missing)
        # in its words, after the cell in the caller's terms.
        msg = "X has a missing value (NaN) at %s, and the method needs complete data: %s" % (
            data.cell(i, j, t), detail)
    elif kind == "unobserved-instance" and i is not None:
        msg = "X: instance %s has no observed value (every value is NaN or masked)" % data.instance_label(i)
    elif kind == "unobserved-feature" and j is not None:
        msg = "X: feature %s is never observed (every value is NaN or masked)" % data.feature_label(j)
    elif kind == "alignment":
        msg = _alignment_message(info, data)
    elif kind == "target" and i is not None:
        if data.instances is None:
            index = (i,)
        at = "instance %r" % (data.instances[i],) if data.instances is not None else "index (%d,)" % i
        if count:  # targets that are not finite
            msg = ("y holds %d NaN or infinite values (the first at %s); tempora needs finite values (a target may "
                   "not be missing)" % (count, at))
        else:
            msg = "y: the target at %s is %s: %s" % (at, info.get("value"), detail)
    elif kind == "targets" and outputs is not None and outputs[0] != "classes":
        msg = "y must have one target per instance of X and output (%s), shape (%d, %d); got %s" % (
            outputs[0], m, outputs[1], y_shape if y_shape is not None else "%s values" % count)
    elif kind == "targets":
        msg = "y must have one %s per instance of X, shape (%d,); got %s" % (
            "class label" if outputs is not None else "target", m,
            y_shape if y_shape is not None else "(%s,)" % count)
    elif kind == "feature-names":
        msg = _names_message(info, data, argument)
    elif kind == "shape" and data.source != "frame":
        shape = "(instances, features, timesteps)" if data.layout == "ndl" else "(instances, timesteps, features)"
        got = data.X.shape if data.layout == "ndl" else (data.X.shape[0], data.X.shape[2], data.X.shape[1])
        msg = "X must have shape %s (layout=%r), none zero; got %s: %s" % (shape, data.layout, got, detail)
    else:
        msg = "%s: %s" % (argument, detail)
    return DataError(msg, info, argument, instance, feature, at_time, index)


def _alignment_message(info: Dict[str, Any], data: Data) -> str:
    """The message of kind "alignment": the rule's counts, and what to
    pass or give instead, in Python's terms."""
    m = data.X.shape[0]
    count = _int(info, "count") or 0
    lengths = info.get("lengths") or [0, 0]
    what = "the times of X" if data.source == "frame" else "X"
    if info.get("alignment") == "end":
        return ("alignment='end' but %s line up the sequences' starts: every instance is observed at the first "
                "timestep and %d of %d end before the last (lengths %d to %d); with alignment='end' the last timestep "
                "must be every sequence's last step. Pass alignment='start', or give end-aligned times (for a "
                "DataFrame, e.g. time minus each instance's last time: df['time'] - "
                "df.groupby('instance')['time'].transform('max'), hours before the end as numbers <= 0; for an array, "
                "NaN padding at the start)" % (what, count, m, lengths[0], lengths[1]))
    return ("alignment='start' (the default) but %s line up the sequences' ends: every instance is observed at the "
            "last timestep and %d of %d start after the first (lengths %d to %d). Pass alignment='end' (the last "
            "timestep is each sequence's last step, e.g. hours before discharge), or give start-aligned times (for "
            "an array, NaN padding at the end)" % (what, count, m, lengths[0], lengths[1]))


def _names_message(info: Dict[str, Any], data: Data, argument: str) -> str:
    """The message of kind "feature-names": a name at fault, or names that
    are not one per feature (with the layout that would fit)."""
    j = _int(info, "feature")
    detail = str(info.get("detail") or info.get("message"))
    if j is not None and data.names is not None and j < len(data.names):
        return "%s: feature name %r (position %d): %s" % (argument, data.names[j], j, detail)
    n, d = len(data.names or ()), data.X.shape[1]
    if data.names is None or n == d:
        return "%s: %s" % (argument, detail)
    hint = ""
    if data.source == "array" and n == data.X.shape[2]:
        other = "nld" if data.layout == "ndl" else "ndl"
        hint = "; X has %d along the other axis: if X is laid out %s, pass layout=%r" % (
            n, "(instances, timesteps, features)" if other == "nld" else "(instances, features, timesteps)", other)
    shape = "(instances, features, timesteps)" if data.layout == "ndl" else "(instances, timesteps, features)"
    return ("%s has %d names but X has %d features: with layout=%r X is %s, features on axis %d%s"
            % (argument, n, d, data.layout, shape, 1 if data.layout == "ndl" else 2, hint))
