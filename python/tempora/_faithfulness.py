"""tempora.faithfulness: how faithful an explanation is to the user's own
model, without ground truth (docs/decisions.md, decision 26).

An explanation ranks cells (feature, timestep) by the magnitude of their
attribution. Removing a cell replaces its value by a replacement value
(mean, permutation or missing; the registry REPLACEMENTS); the model is
called on the changed data and a measure (MEASURES) says how far its answer
moved from its answer on the unchanged data:

- deletion curve: the measure with the top fraction k of cells removed
  (ERASER's comprehensiveness at k);
- insertion curve: the measure with every cell removed except the top
  fraction k (ERASER's sufficiency at k);
- for a global explanation (one features x timesteps grid for every
  instance, or a set of claimed cells), the measure of keeping only the
  claimed cells, and of removing them.

Everything is computed here, in the Python process that holds the model:
the tempora program is not involved (decision 26 says why). Missing cells
(NaN in X) follow the observed-only rule: they are never ranked, never
counted in a fraction, and stay missing in every changed input.
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from . import _input
from ._binary import ModelError

Array = npt.NDArray[np.float64]

#: The default fractions of cells: 0, 0.05, ..., 1.
DEFAULT_FRACTIONS: Tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(21))

#: The default number of permutation draws (replacement="permutation").
DEFAULT_DRAWS = 10

#: How far binary cross-entropy keeps probabilities from 0 and 1, as the
#: program's loss does (tempora.ProbClip in loss.go).
PROB_CLIP = 1e-12

#: Cells whose |score| is below this are not claimed by a global
#: explanation (the benchmark's non-zero rule, method.NearZero).
NEAR_ZERO = 1e-10

# The slack of "the smallest number of cells m with m >= k * n": absorbs
# the rounding of k * n (0.35 * 10 is 3.4999999999999996).
_COUNT_SLACK = 1e-9


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Curve:
    """A deletion or insertion curve: the mean change of the measure over
    instances at each fraction, with standard errors.

    values[f] is the mean over instances (and permutation draws) at
    fractions[f]; se[f] its standard error over instances (the standard
    deviation of instance_values[:, f] over instances, divided by the
    square root of their number); se_draws[f] its standard error over
    permutation draws (of draw_values[:, f]; NaN with one draw). area is
    the trapezoidal area under the curve over fractions, with area_se and
    area_se_draws computed the same way from each instance's (each draw's)
    own area. instance_values (instances x fractions, averaged over draws)
    allow paired comparisons of two explanations on the same instances."""

    fractions: Array
    values: Array
    se: Array
    se_draws: Array
    area: float
    area_se: float
    area_se_draws: float
    instance_values: Array
    draw_values: Array

    def at(self, fraction: float) -> Tuple[float, float]:
        """(value, se) at one of the curve's fractions; KeyError for
        another fraction."""
        hit = np.flatnonzero(np.abs(self.fractions - float(fraction)) <= _COUNT_SLACK)
        if hit.size == 0:
            raise KeyError("fraction %r is not one of the curve's fractions %s" % (fraction, self.fractions.tolist()))
        f = int(hit[0])
        return float(self.values[f]), float(self.se[f])


@dataclass(frozen=True)
class Change:
    """One change of the measure (a mean over instances and draws) with its
    standard errors over instances and over draws (NaN with one draw)."""

    value: float
    se: float
    se_draws: float
    instance_values: Array


@dataclass(frozen=True)
class Claimed:
    """A global explanation's claimed cells and what they do: keep_only is
    the change of the measure when every observed cell but the claimed ones
    is replaced, removed when the claimed cells are replaced."""

    cells: "npt.NDArray[np.bool_]"  # features x timesteps, True where claimed
    keep_only: Change
    removed: Change


@dataclass(frozen=True)
class Faithfulness:
    """The faithfulness of an explanation to a model (tempora.faithfulness).

    measure: "prediction" or "loss", what the changes are measured on (see
    tempora.faithfulness); replacement: "mean", "permutation" or
    "missing"; scope: "local" (per-instance attributions) or "global" (one
    features x timesteps grid or claimed set for every instance);
    reference: the mean measure on the unchanged data (the predicted-class
    probability, the prediction, or the loss); deletion and insertion:
    Curves; claimed: for a global explanation, its claimed cells and their
    changes (None for a local one); instances: the number of instances
    scored; draws: the permutation draws (1 for mean and missing); seed:
    the seed of the draws; model_calls: the calls of the model."""

    measure: str
    replacement: str
    scope: str
    task: str
    reference: float
    deletion: Curve
    insertion: Curve
    claimed: Optional[Claimed]
    instances: int
    draws: int
    seed: int
    model_calls: int

    def comprehensiveness(self, fraction: float) -> Tuple[float, float]:
        """ERASER's comprehensiveness at a stated fraction, (value, se):
        the deletion curve there."""
        return self.deletion.at(fraction)

    def sufficiency(self, fraction: float) -> Tuple[float, float]:
        """ERASER's sufficiency at a stated fraction, (value, se): the
        insertion curve there."""
        return self.insertion.at(fraction)

    def to_dataframe(self) -> "Any":
        """A pandas DataFrame in long form: one row per curve and fraction
        (columns curve, fraction, value, se, se_draws), then a row per area
        (fraction NaN) and, for a global explanation, the rows keep_only and
        removed (fraction: the claimed share of cells)."""
        import pandas as pd
        rows: List[Dict[str, Any]] = []
        for name, c in (("deletion", self.deletion), ("insertion", self.insertion)):
            for f, v, s, sd in zip(c.fractions, c.values, c.se, c.se_draws):
                rows.append({"curve": name, "fraction": float(f), "value": float(v), "se": float(s),
                             "se_draws": float(sd)})
        for name, c in (("deletion_area", self.deletion), ("insertion_area", self.insertion)):
            rows.append({"curve": name, "fraction": float("nan"), "value": c.area, "se": c.area_se,
                         "se_draws": c.area_se_draws})
        if self.claimed is not None:
            share = float(self.claimed.cells.mean())
            for name, ch in (("keep_only", self.claimed.keep_only), ("removed", self.claimed.removed)):
                rows.append({"curve": name, "fraction": share, "value": ch.value, "se": ch.se,
                             "se_draws": ch.se_draws})
        return pd.DataFrame(rows, columns=["curve", "fraction", "value", "se", "se_draws"])

    def __str__(self) -> str:
        lines = ["faithfulness (%s explanation; measure %s, replacement %s, %d instances, %d draw%s)"
                 % (self.scope, self.measure, self.replacement, self.instances, self.draws,
                    "" if self.draws == 1 else "s"),
                 "  reference %.6g" % self.reference,
                 "  deletion area %.6g \u00b1 %.2g (higher: the top cells matter more)"
                 % (self.deletion.area, self.deletion.area_se),
                 "  insertion area %.6g \u00b1 %.2g (lower: the top cells suffice)"
                 % (self.insertion.area, self.insertion.area_se)]
        if self.claimed is not None:
            lines.append("  claimed %d cells: keep only %.6g \u00b1 %.2g, removed %.6g \u00b1 %.2g"
                         % (int(self.claimed.cells.sum()), self.claimed.keep_only.value, self.claimed.keep_only.se,
                            self.claimed.removed.value, self.claimed.removed.se))
        return "\n".join(lines)


# ----------------------------------------------------------- replacements


class Replacement:
    """The values a removed cell takes: values(X, draw) is an (n, D, L)
    array for draw 0, 1, ... (NaN: the cell becomes missing)."""

    name = ""
    random = False

    def __init__(self, X: Array, rng: np.random.Generator, draws: int) -> None:
        self.X = X

    def values(self, draw: int) -> Array:
        raise NotImplementedError


class _Mean(Replacement):
    """The mean of each (feature, timestep) over the instances where it is
    observed (missing where it never is): one deterministic draw."""

    name = "mean"

    def __init__(self, X: Array, rng: np.random.Generator, draws: int) -> None:
        super().__init__(X, rng, draws)
        obs = ~np.isnan(X)
        count = obs.sum(0)
        total = np.where(obs, X, 0.0).sum(0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        self.mean = np.broadcast_to(mean, X.shape)

    def values(self, draw: int) -> Array:
        out: Array = self.mean
        return out


class _Permutation(Replacement):
    """Each instance's removed cells take the values of a donor instance,
    drawn uniformly from the other instances, one donor per instance and
    draw (a donor's missing cell makes the cell missing)."""

    name = "permutation"
    random = True

    def __init__(self, X: Array, rng: np.random.Generator, draws: int) -> None:
        super().__init__(X, rng, draws)
        n = X.shape[0]
        if n < 2:
            raise ValueError("replacement='permutation' needs at least two instances in X")
        donors = rng.integers(0, n - 1, size=(draws, n))
        self.donors = donors + (donors >= np.arange(n))  # skip the instance itself

    def values(self, draw: int) -> Array:
        out: Array = self.X[self.donors[draw]]
        return out


class _Missing(Replacement):
    """A removed cell becomes missing (NaN), for models that take missing
    values: one deterministic draw."""

    name = "missing"

    def values(self, draw: int) -> Array:
        out: Array = np.full(self.X.shape, np.nan)
        return out


#: The replacement values by name (replacement=).
REPLACEMENTS: Dict[str, Callable[[Array, np.random.Generator, int], Replacement]] = {
    "mean": _Mean, "permutation": _Permutation, "missing": _Missing,
}


# ---------------------------------------------------------------- measures


def _loss(task: str, y: Array, pred: Array) -> Array:
    """Per-instance loss as the program computes it (loss.go): squared error
    for regression, binary cross-entropy with probabilities clipped to
    [PROB_CLIP, 1 - PROB_CLIP] for classification."""
    if task == "regression":
        d = y - pred
        out: Array = d * d
        return out
    p = np.clip(pred, PROB_CLIP, 1 - PROB_CLIP)
    with np.errstate(invalid="ignore"):
        out = np.where(y == 1, -np.log(p), np.where(y == 0, -np.log1p(-p), -y * np.log(p) - (1 - y) * np.log1p(-p)))
    return out


def _prediction_reference(task: str, y: Optional[Array], base: Array) -> Array:
    if task == "classification":
        out: Array = np.where(base >= 0.5, base, 1 - base)
        return out
    return base


def _prediction_change(task: str, y: Optional[Array], base: Array, pred: Array) -> Array:
    """The drop of the predicted-class probability (class 1 where the
    unchanged probability is at least 0.5), or for regression the size of
    the prediction's change."""
    if task == "classification":
        out: Array = np.where(base >= 0.5, base - pred, pred - base)
        return out
    out = np.abs(pred - base)
    return out


def _loss_reference(task: str, y: Optional[Array], base: Array) -> Array:
    assert y is not None
    return _loss(task, y, base)


def _loss_change(task: str, y: Optional[Array], base: Array, pred: Array) -> Array:
    assert y is not None
    out: Array = _loss(task, y, pred) - _loss(task, y, base)
    return out


@dataclass(frozen=True)
class Measure:
    """What a change is measured on: reference(task, y, base) per instance
    on the unchanged data, change(task, y, base, pred) per instance for a
    changed input; needs_y says whether targets are needed."""

    reference: Callable[[str, Optional[Array], Array], Array]
    change: Callable[[str, Optional[Array], Array, Array], Array]
    needs_y: bool


#: The measures by name (measure=).
MEASURES: Dict[str, Measure] = {
    "prediction": Measure(_prediction_reference, _prediction_change, False),
    "loss": Measure(_loss_reference, _loss_change, True),
}


# ------------------------------------------------------------ the function


def faithfulness(model: Any, X: Any, y: Any, attributions: Any, task: Optional[str] = None, *,
                 fractions: Optional[Sequence[float]] = None, replacement: str = "mean",
                 measure: Optional[str] = None, draws: Optional[int] = None, seed: int = 0,
                 layout: str = "ndl", feature_names: Optional[Sequence[str]] = None, alignment: str = "start",
                 mask: Any = None, classes: Optional[Sequence[Any]] = None,
                 max_batch: Optional[int] = None) -> Faithfulness:
    """How faithful an explanation is to the model, without ground truth:
    deletion and insertion curves with their areas, ERASER's
    comprehensiveness and sufficiency, and for a global explanation the
    change of keeping only its claimed cells.

    Cells are ranked by the magnitude of their attribution (ties: the lower
    index first, feature-major), each instance among its own observed cells.
    At a fraction k the top m cells are taken, m the smallest count with m
    >= k times the instance's observed cells. The deletion curve at k is
    the change of the measure when the top m cells are replaced
    (comprehensiveness); the insertion curve at k the change when every
    observed cell except the top m is replaced (sufficiency). Areas are
    trapezoidal over fractions. A good explanation has a high deletion area
    and a low insertion area.

    Parameters
    ----------
    model : callable, estimator, torch.nn.Module or Keras-style model
        The model, as tempora.explain takes it (one output).
    X : numpy.ndarray, torch.Tensor, list of arrays or pandas.DataFrame
        The data, as tempora.explain takes it (layout, feature_names,
        alignment, mask as there). NaN is a missing value: never ranked,
        never counted, never replaced (the observed-only rule).
    y : array-like or None
        One target per instance, as tempora.explain takes it. Needed for
        measure="loss"; for "prediction" it only maps labels (classes).
    attributions : array, an object with an ``attributions`` array, or an
        Explanation
        Per-instance attributions, an array of X's shape (in X's layout,
        instances in the order tempora.as_array gives them; the first M <=
        n instances if it has M rows), or an object whose
        ``attributions`` is such an array (instances, features, timesteps)
        -- a local explanation. Or a global explanation: an array of one
        instance's shape (features, timesteps in X's layout; booleans: the
        claimed cells), or a tempora Explanation without attributions,
        whose cells rank the cells for every instance and whose claimed
        cells are its non-zero cells and every timestep of an important
        feature without any.
    task : {"regression", "classification"}
        What the model returns, as for tempora.explain.
    fractions : sequence of float, optional
        Increasing fractions in [0, 1] (default 0, 0.05, ..., 1).
    replacement : {"mean", "permutation", "missing"}, default "mean"
        The value a removed cell takes. "mean": the mean of its (feature,
        timestep) over the instances observed there. "permutation": the
        value of a donor instance, drawn uniformly from the other instances
        for each instance and draw (seeded by seed). "missing": NaN, the
        cell becomes missing, for a model that takes missing values. A
        replacement that is NaN (a cell never observed, a donor's missing
        cell) leaves the cell missing.
    measure : {"prediction", "loss"}, optional
        What a change is measured on. "prediction": for classification the drop
        of the predicted-class probability (the class predicted on the
        unchanged instance, class 1 at probability 0.5), p_c(x) - p_c(x');
        for regression the size of the prediction's change, ``|f(x) - f(x')|``.
        "loss": the increase of the loss the program uses (squared error;
        binary cross-entropy), loss(x') - loss(x). Default: "prediction" for
        per-instance attributions, "loss" for a global explanation.
    draws : int, optional
        Permutation draws (replacement="permutation"; default 10).
    seed : int, default 0
        The seed of the permutation draws (numpy.random.default_rng).
    classes : (negative, positive), optional
        As for tempora.explain.
    max_batch : int, optional
        The most instances per call of the model (default: all).

    Returns
    -------
    Faithfulness
        The curves, areas, standard errors over instances (and over draws),
        comprehensiveness(k), sufficiency(k), claimed (global), and
        to_dataframe().

    Raises
    ------
    ValueError
        For attributions, targets, fractions or data that cannot be used
        (a shape that does not match X, NaN or infinite attributions at
        observed cells, NaN targets for the loss, an infinite value in X,
        an instance with nothing observed), naming the argument.
    ModelError
        When the model fails or returns an unusable answer.
    """
    if task not in ("regression", "classification"):
        raise ValueError("task must be 'regression' or 'classification', got %r" % (task,))
    data = _input.as_data(X, layout, feature_names, alignment, mask)
    Xa = data.X
    _check_X(Xa)
    ranks, global_scores, claimed_cells = _attributions(attributions, Xa, data.layout)
    scope = "local" if global_scores is None else "global"
    meas_name = measure if measure is not None else ("prediction" if scope == "local" else "loss")
    if meas_name not in MEASURES:
        raise ValueError("measure must be one of %s, got %r" % (", ".join(repr(m) for m in MEASURES), meas_name))
    meas = MEASURES[meas_name]
    labels, ya = _targets(y, task, Xa.shape[0], data.instances, classes, meas_name, meas.needs_y)
    fr = _fractions(fractions)
    if replacement not in REPLACEMENTS:
        raise ValueError("replacement must be one of %s, got %r"
                         % (", ".join(repr(r) for r in REPLACEMENTS), replacement))
    ndraws = _draws(draws, replacement)
    if max_batch is not None and (isinstance(max_batch, bool) or int(max_batch) < 1):
        raise ValueError("max_batch must be a positive integer, got %r" % (max_batch,))
    rng = np.random.default_rng(seed)
    rep = REPLACEMENTS[replacement](Xa, rng, ndraws)
    predict = _input.as_predict(model, task, data.layout, labels, 0)
    caller = _Caller(predict, task, max_batch)

    m = ranks.shape[0]  # the instances scored: the first m of X
    X0 = Xa[:m]
    y0 = ya[:m] if ya is not None else None
    base = caller(X0, "the unchanged data")
    observed = ~np.isnan(X0)
    counts = observed.reshape(m, -1).sum(1)
    tops = [_top_counts(k, counts) for k in fr]
    dele = np.empty((ndraws, m, len(fr)))
    ins = np.empty((ndraws, m, len(fr)))
    for d in range(ndraws):
        R = rep.values(d)[:m]
        for f, top in enumerate(tops):
            chosen = (ranks < top[:, None]).reshape(X0.shape)
            what = "fraction %g" % fr[f]
            dele[d, :, f] = meas.change(task, y0, base, caller(np.where(chosen, R, X0), "deletion at " + what))
            kept = np.where(observed & ~chosen, R, X0)
            ins[d, :, f] = meas.change(task, y0, base, caller(kept, "insertion at " + what))
    claimed = None
    if claimed_cells is not None:
        claimed = _claimed(claimed_cells, X0, observed, rep, ndraws, meas, task, y0, base, caller)
    return Faithfulness(measure=meas_name, replacement=replacement, scope=scope, task=task,
                        reference=float(meas.reference(task, y0, base).mean()),
                        deletion=_curve(fr, dele), insertion=_curve(fr, ins), claimed=claimed, instances=m,
                        draws=ndraws, seed=int(seed), model_calls=caller.calls)


def _claimed(cells: "npt.NDArray[np.bool_]", X0: Array, observed: "npt.NDArray[np.bool_]", rep: Replacement,
             ndraws: int, meas: Measure, task: str, y0: Optional[Array], base: Array, caller: "_Caller") -> Claimed:
    """The changes of keeping only the claimed cells and of removing them."""
    m = X0.shape[0]
    keep = np.empty((ndraws, m, 1))
    rem = np.empty((ndraws, m, 1))
    for d in range(ndraws):
        R = rep.values(d)[:m]
        keep[d, :, 0] = meas.change(task, y0, base, caller(np.where(observed & ~cells, R, X0),
                                                            "keeping only the claimed cells"))
        rem[d, :, 0] = meas.change(task, y0, base, caller(np.where(cells, R, X0), "removing the claimed cells"))
    return Claimed(cells=cells, keep_only=_change(keep), removed=_change(rem))


def _se(a: Array, axis: int) -> Array:
    """The standard error of the mean along axis (sample standard deviation
    over the square root of the count; NaN for one value)."""
    k = a.shape[axis]
    if k < 2:
        out: Array = np.full(np.delete(a.shape, axis), np.nan)
        return out
    out = a.std(axis=axis, ddof=1) / np.sqrt(k)
    return out


def _curve(fr: Array, vals: Array) -> Curve:
    """A Curve from the changes of (draws, instances, fractions)."""
    per_instance = vals.mean(0)
    per_draw = vals.mean(1)
    areas = _trapezoid(vals, fr)  # (draws, instances)
    return Curve(fractions=fr, values=vals.mean((0, 1)), se=_se(per_instance, 0), se_draws=_se(per_draw, 0),
                 area=float(areas.mean()), area_se=float(_se(areas.mean(0), 0)),
                 area_se_draws=float(_se(areas.mean(1), 0)), instance_values=per_instance, draw_values=per_draw)


def _change(vals: Array) -> Change:
    """A Change from the changes of (draws, instances, 1)."""
    v = vals[:, :, 0]
    return Change(value=float(v.mean()), se=float(_se(v.mean(0), 0)), se_draws=float(_se(v.mean(1), 0)),
                  instance_values=v.mean(0))


def _trapezoid(vals: Array, fr: Array) -> Array:
    """The trapezoidal area over fractions (the last axis); 0 for one
    fraction."""
    if len(fr) < 2:
        out: Array = np.zeros(vals.shape[:-1])
        return out
    out = ((vals[..., 1:] + vals[..., :-1]) * 0.5 * np.diff(fr)).sum(-1)
    return out


def _top_counts(k: float, counts: "npt.NDArray[np.int64]") -> "npt.NDArray[np.int64]":
    """The number of cells of each instance in its top fraction k: the
    smallest m with m >= k * count."""
    out: "npt.NDArray[np.int64]" = np.minimum(np.ceil(k * counts - _COUNT_SLACK), counts).astype(np.int64)
    return np.maximum(out, 0)


# ------------------------------------------------------------ the inputs


def _check_X(Xa: Array) -> None:
    bad = np.argwhere(np.isinf(Xa))
    if bad.size:
        raise ValueError("X holds an infinite value at index %s (NaN marks a missing value)" % (tuple(bad[0]),))
    empty = np.flatnonzero(np.isnan(Xa).reshape(Xa.shape[0], -1).all(1))
    if empty.size:
        raise ValueError("X: instance %d has no observed value" % empty[0])


def _ranks(scores: Array, observed: "npt.NDArray[np.bool_]") -> "npt.NDArray[np.int64]":
    """Each cell's rank among its instance's observed cells by ``|score|``,
    largest first, ties by the lower index; missing cells rank last."""
    m = scores.shape[0]
    key = np.where(observed, -np.abs(scores), np.inf).reshape(m, -1)
    order = np.argsort(key, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(order.shape[1])[None, :], axis=1)
    big = np.iinfo(np.int64).max
    out: "npt.NDArray[np.int64]" = np.where(observed.reshape(m, -1), ranks, big).astype(np.int64)
    return out


def _attributions(a: Any, Xa: Array, layout: str
                  ) -> Tuple["npt.NDArray[np.int64]", Optional[Array], Optional["npt.NDArray[np.bool_]"]]:
    """The cells' ranks (instances x cells), and for a global explanation
    its grid and claimed cells (features x timesteps)."""
    n, D, L = Xa.shape
    ndl = False  # whether the array is in tempora's (.., features, timesteps) order whatever X's layout
    claimed: Optional["npt.NDArray[np.bool_]"] = None
    if getattr(a, "attributions", None) is not None:
        arr, ndl = a.attributions, True
    elif hasattr(a, "cells") and hasattr(a, "features"):
        if getattr(a, "outputs", None) is not None:
            raise ValueError("attributions: faithfulness takes a model of one output; the explanation has %d"
                             % len(a.outputs))
        arr, ndl = np.asarray(a.cells, dtype=np.float64), True
        claimed = _explanation_claims(a, arr)
    else:
        arr = a
    arr = np.asarray(_input._to_numpy(arr))
    if arr.dtype == np.bool_ and arr.ndim == 2:
        arr = arr.astype(np.float64)
    try:
        arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError("attributions must be numbers, got an array of %s" % arr.dtype) from None
    want = "(instances, features, timesteps)" if layout == "ndl" or ndl else "(instances, timesteps, features)"
    if arr.ndim == 3:
        if layout == "nld" and not ndl:
            arr = arr.transpose(0, 2, 1)
        if arr.shape[0] > n or arr.shape[1:] != (D, L):
            raise ValueError("attributions must have shape %s with at most %d instances, the shape of X %s; got %s"
                             % (want, n, _shape(layout, ndl, n, D, L), np.shape(arr)))
        _check_finite(arr, ~np.isnan(Xa[:arr.shape[0]]))
        return _ranks(arr, ~np.isnan(Xa[:arr.shape[0]])), None, None
    if arr.ndim == 2:
        if layout == "nld" and not ndl:
            arr = arr.T
        if arr.shape != (D, L):
            raise ValueError("attributions of a global explanation must have the shape of one instance, %s; got %s"
                             % ("(%d, %d)" % ((D, L) if layout == "ndl" or ndl else (L, D)), np.shape(a)))
        _check_finite(arr[None], np.ones((1, D, L), dtype=bool))
        if claimed is None:
            claimed = np.abs(arr) >= NEAR_ZERO
        observed = ~np.isnan(Xa)
        return _ranks(np.broadcast_to(arr, Xa.shape), observed), arr, claimed
    raise ValueError("attributions must be per-instance %s or one instance's (features, timesteps), for a model of one "
                     "output; got an array of shape %s" % (want, np.shape(arr)))


def _shape(layout: str, ndl: bool, n: int, D: int, L: int) -> str:
    return str((n, D, L) if layout == "ndl" or ndl else (n, L, D))


def _check_finite(arr: Array, observed: "npt.NDArray[np.bool_]") -> None:
    bad = np.argwhere(~np.isfinite(arr) & observed)
    if bad.size:
        raise ValueError("attributions hold %s at index %s, an observed cell of X"
                         % ("NaN" if np.isnan(arr[tuple(bad[0])]) else "an infinity", tuple(bad[0])))


def _explanation_claims(e: Any, cells: Array) -> "npt.NDArray[np.bool_]":
    """The cells an explanation claims: its non-zero cells, and every
    timestep of an important feature that has none (TIME found the feature
    but no window of it)."""
    claimed: "npt.NDArray[np.bool_]" = np.abs(cells) >= NEAR_ZERO
    for f in e.features:
        if getattr(f, "important", False) and 0 <= f.index < claimed.shape[0] and not claimed[f.index].any():
            claimed[f.index] = True
    return claimed


def _targets(y: Any, task: str, n: int, instances: Optional[List[Any]], classes: Optional[Sequence[Any]],
             measure: str, needed: bool) -> Tuple[Optional[Tuple[Any, Any]], Optional[Array]]:
    """The labels (for predict_proba's positive column) and the float
    targets, checked when the measure needs them."""
    if y is None:
        if needed:
            raise ValueError("y: measure=%r needs one target per instance of X" % measure)
        return None, None
    ya, labels = _input.as_targets(y, task, n, instances, classes)
    if ya.shape[0] != n:
        raise ValueError("y must have one target per instance of X, %d; got %d" % (n, ya.shape[0]))
    bad = np.flatnonzero(~np.isfinite(ya))
    if bad.size and needed:
        raise ValueError("y: the target of instance %d is %s; measure=%r needs finite targets"
                         % (bad[0], ya[bad[0]], measure))
    return labels, ya


def _fractions(fractions: Optional[Sequence[float]]) -> Array:
    fr = np.asarray(DEFAULT_FRACTIONS if fractions is None else fractions, dtype=np.float64)
    if fr.ndim != 1 or fr.size == 0:
        raise ValueError("fractions must be a non-empty sequence of numbers in [0, 1], got %r" % (fractions,))
    if not np.all(np.isfinite(fr)) or fr.min() < 0 or fr.max() > 1 or np.any(np.diff(fr) <= 0):
        raise ValueError("fractions must be increasing numbers in [0, 1], got %s" % fr.tolist())
    return fr


def _draws(draws: Optional[int], replacement: str) -> int:
    random = REPLACEMENTS[replacement] is _Permutation
    if draws is None:
        return DEFAULT_DRAWS if random else 1
    if isinstance(draws, bool) or int(draws) != draws or draws < 1:
        raise ValueError("draws must be a positive integer, got %r" % (draws,))
    if not random and draws != 1:
        raise ValueError("draws=%d: replacement=%r is deterministic (draws applies to 'permutation')"
                         % (draws, replacement))
    return int(draws)


class _Caller:
    """Calls of the adapted model on (m, D, L) arrays, in batches of at
    most max_batch instances; answers checked (m finite numbers,
    probabilities in [0, 1] for classification)."""

    def __init__(self, predict: Any, task: str, max_batch: Optional[int]) -> None:
        self.predict, self.task, self.max_batch = predict, task, max_batch
        self.calls = 0

    def _batches(self, x: Array) -> Iterator[Array]:
        step = int(self.max_batch or x.shape[0])
        for s in range(0, x.shape[0], step):
            yield np.ascontiguousarray(x[s:s + step])

    def __call__(self, x: Array, what: str) -> Array:
        parts = []
        for b in self._batches(x):
            self.calls += 1
            try:
                out = self.predict(b)
            except Exception as exc:
                raise ModelError("predict failed on %s (%d instances): %s: %s"
                                 % (what, len(b), type(exc).__name__, exc)) from exc
            try:
                a = np.asarray(_input._to_numpy(out), dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ModelError("predict on %s returned %s, not numbers" % (what, type(out).__name__)) from exc
            if a.ndim == 2 and a.shape[1] == 1:
                a = a[:, 0]
            if a.shape != (len(b),):
                raise ModelError("predict on %s returned shape %s for %d instances; want (%d,) (faithfulness takes a "
                                 "model of one output)" % (what, a.shape, len(b), len(b)))
            parts.append(a)
        pred = np.concatenate(parts)
        bad = np.flatnonzero(~np.isfinite(pred))
        if bad.size:
            raise ModelError("predict returned %s for instance %d on %s%s" % (
                pred[bad[0]], bad[0], what, "" if not np.isnan(x).any() else
                " (its input holds missing cells: a model that cannot take NaN needs replacement='mean' or "
                "'permutation' and data without missing values)"))
        if self.task == "classification" and (pred.min() < 0 or pred.max() > 1):
            raise ModelError("predict returned %g on %s; task='classification' wants probabilities in [0, 1]"
                             % (pred.min() if pred.min() < 0 else pred.max(), what))
        return pred
