"""A synthetic problem's model as a NumPy function and a PyTorch module.

The model is read from the problem's model.json, the structured description
``tempora synth`` and ``tempora problems`` write: every parameter (windows,
aggregators, weights, standardisation, coefficients, the noise multiplier,
the threshold; or the units, reads and tree of a model with several
outputs). Nothing is re-derived: the formulas are the file's "definition",
written once here (SynthModel._forward) over a small set of array operations
that NumPy and PyTorch each provide, so that the NumPy function and the
module compute the same thing. Each format is one class and one entry of
_FORMATS.
"""

import json
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type

import numpy as np
import numpy.typing as npt

from ._binary import StrPath

ADDITIVE_FORMAT = "tempora-synth-model/1"
OUTPUTS_FORMAT = "tempora-synth-outputs-model/1"


class _NumpyOps:
    """The array operations of SynthModel._forward, in NumPy."""

    def prepare(self, x: Any) -> Any:
        return np.asarray(x, dtype=np.float64)

    def const(self, a: "npt.NDArray[Any]", like: Any) -> Any:
        return a

    def isnan(self, a: Any) -> Any:
        return np.isnan(a)

    def any(self, a: Any) -> bool:
        return bool(np.any(a))

    def where(self, m: Any, a: Any, b: Any) -> Any:
        return np.where(m, a, b)

    def count(self, m: Any) -> Any:
        return np.sum(m, axis=-1, dtype=np.float64)

    def max(self, a: Any) -> Any:
        return np.max(a, axis=-1)

    def sum(self, a: Any) -> Any:
        return np.sum(a, axis=-1)

    def abs(self, a: Any) -> Any:
        return np.abs(a)

    def sigmoid(self, z: Any) -> Any:
        return 1 / (1 + np.exp(-z))

    def stack(self, parts: Sequence[Any]) -> Any:
        return np.stack(list(parts), axis=-1)

    def cummax(self, a: Any) -> Any:
        return np.maximum.accumulate(a, axis=-1)

    def gather(self, a: Any, idx: Any) -> Any:
        return np.take_along_axis(a, idx, axis=-1)

    def zeros(self, like: Any) -> Any:
        return np.zeros(like.shape[0])


class _TorchOps:
    """The same operations in PyTorch (float64), differentiable: torch.amax
    spreads the gradient evenly over tied maxima and torch.abs has gradient
    0 at 0, subgradients where the model has a kink."""

    def __init__(self) -> None:
        import torch

        self.torch = torch

    def prepare(self, x: Any) -> Any:
        t = self.torch
        return x.to(t.float64) if isinstance(x, t.Tensor) else t.as_tensor(np.asarray(x, dtype=np.float64))

    def const(self, a: "npt.NDArray[Any]", like: Any) -> Any:
        return self.torch.as_tensor(a, device=like.device)

    def isnan(self, a: Any) -> Any:
        return self.torch.isnan(a)

    def any(self, a: Any) -> bool:
        return bool(a.any())

    def where(self, m: Any, a: Any, b: Any) -> Any:
        t = self.torch
        like = a if isinstance(a, t.Tensor) else b
        a, b = (v if isinstance(v, t.Tensor) else t.tensor(v, dtype=like.dtype, device=like.device) for v in (a, b))
        return t.where(m, a, b)

    def count(self, m: Any) -> Any:
        return self.torch.sum(m, dim=-1, dtype=self.torch.float64)

    def max(self, a: Any) -> Any:
        return self.torch.amax(a, dim=-1)

    def sum(self, a: Any) -> Any:
        return self.torch.sum(a, dim=-1)

    def abs(self, a: Any) -> Any:
        return self.torch.abs(a)

    def sigmoid(self, z: Any) -> Any:
        return self.torch.sigmoid(z)

    def stack(self, parts: Sequence[Any]) -> Any:
        return self.torch.stack(list(parts), dim=-1)

    def cummax(self, a: Any) -> Any:
        return self.torch.cummax(a, dim=-1).values

    def gather(self, a: Any, idx: Any) -> Any:
        return self.torch.gather(a, -1, idx)

    def zeros(self, like: Any) -> Any:
        return self.torch.zeros(like.shape[0], dtype=self.torch.float64, device=like.device)


class SynthModel:
    """The model of a synthetic problem, read from its model.json.

    Calling it on a batch (instances, features, timesteps) returns the
    predictions the program's model returns (``Problem.predict``): values,
    probabilities of class 1, or (instances, K) for a model of K outputs.
    torch() is the same model as a torch.nn.Module in float64, for
    gradient methods (integrated gradients, saliency: tempora.gradients).

    Attributes:
        format: the model.json format.
        task: "regression" or "classification".
        num_features, num_timesteps: the shape of an instance.
        num_outputs: K, or 1 for a model of one output.

    The parameters are the problem's (its model.json); a method under test
    in a benchmark uses the model only as a function with gradients, as it
    leaves the truth alone.
    """

    format: str = ""
    task: str
    num_features: int
    num_timesteps: int
    num_outputs: int

    def __init__(self, doc: Dict[str, Any]) -> None:
        self.num_features = int(doc["num_features"])
        self.num_timesteps = int(doc["num_timesteps"])
        if self.num_features < 1 or self.num_timesteps < 1:
            raise ValueError("model of %d features x %d timesteps" % (self.num_features, self.num_timesteps))

    @staticmethod
    def read(path: StrPath) -> "SynthModel":
        """The model of a problem directory (or of a model.json file)
        written by tempora synth or tempora problems."""
        p = os.fspath(path)
        if os.path.isdir(p):
            p = os.path.join(p, "model.json")
        with open(p, encoding="utf-8") as f:
            doc = json.load(f)
        try:
            return SynthModel.from_dict(doc)
        except ValueError as exc:
            raise ValueError("%s: %s" % (p, exc)) from None

    @staticmethod
    def from_dict(doc: Dict[str, Any]) -> "SynthModel":
        """The model of a parsed model.json, of either format."""
        fmt = doc.get("format") if isinstance(doc, dict) else None
        kind = _FORMATS.get(fmt)
        if kind is None:
            raise ValueError("model format %r, want one of %s" % (fmt, ", ".join(sorted(f for f in _FORMATS if f))))
        try:
            return kind(doc)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ValueError("malformed model: %s" % (exc,)) from None

    def __call__(self, batch: npt.ArrayLike) -> "npt.NDArray[np.float64]":
        """The model's predictions for batch (instances, features,
        timesteps), in float64."""
        out: "npt.NDArray[np.float64]" = self._forward(self._check(np.asarray(batch, dtype=np.float64)), _NumpyOps())
        return out

    predict = __call__

    def torch(self) -> Any:
        """The model as a torch.nn.Module: forward(x) takes a tensor (or
        array) of shape (instances, features, timesteps), computes in
        float64 and returns a tensor of the shape __call__ returns, equal to
        it and differentiable in x. Needs PyTorch."""
        return _module(self)

    def _check(self, x: Any) -> Any:
        if x.ndim != 3 or tuple(x.shape[1:]) != (self.num_features, self.num_timesteps):
            raise ValueError("batch of shape %s, the model takes (instances, %d, %d)" % (
                tuple(x.shape), self.num_features, self.num_timesteps))
        return x

    def _forward(self, x: Any, ops: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return "<%s %s, %d x %d, %d output(s)>" % (
            type(self).__name__, self.task, self.num_features, self.num_timesteps, self.num_outputs)


class _Term:
    """One feature's term of an additive model: scale·(nonlinearity(
    aggregator(x[j, lo:hi])) − mean), scale = coefficient / sd."""

    def __init__(self, j: int, f: Dict[str, Any], l: int) -> None:
        if int(f["index"]) != j:
            raise ValueError("feature %d has index %s" % (j, f["index"]))
        lo, hi = int(f["window"][0]), int(f["window"][1])
        if not 0 <= lo <= hi < l:
            raise ValueError("feature %d: window %s outside 0..%d" % (j, f["window"], l - 1))
        self.j, self.lo, self.hi = j, lo, hi + 1
        self.aggregator: str = f["aggregator"]
        self.nonlinearity: str = f["nonlinearity"]
        if self.aggregator not in _AGGREGATORS or self.nonlinearity not in _NONLINEARITIES:
            raise ValueError("feature %d: aggregator %r, nonlinearity %r" % (j, self.aggregator, self.nonlinearity))
        self.weights: Optional["npt.NDArray[np.float64]"] = None
        if self.aggregator.endswith("weighted_sum"):
            self.weights = np.asarray(f["weights"], dtype=np.float64)
            if self.weights.shape != (self.hi - self.lo,):
                raise ValueError("feature %d: %d weights for a window of %d" % (j, self.weights.size, self.hi - self.lo))
        self.mean = float(f["mean"])
        self.scale = float(f["coefficient"]) / float(f["sd"])  # as the program computes it
        self.relevant = bool(f["relevant"])

    def aggregate(self, w: Any, ops: Any, like: Any) -> Any:
        if self.weights is not None:
            return ops.sum(w * ops.const(self.weights, like))
        return ops.max(w) if self.aggregator == "max" else ops.sum(w) / w.shape[-1]

    def aggregate_observed(self, w: Any, ops: Any, like: Any) -> Tuple[Any, Any]:
        """The aggregate over the observed (non-NaN) values of the window
        and whether there are any (the model of an irregular world)."""
        obs = ~ops.isnan(w)
        n = ops.count(obs)
        w0 = ops.where(obs, w, 0.0)
        if self.aggregator == "max":
            v = ops.max(ops.where(obs, w, -np.inf))
        elif self.aggregator == "average":
            v = ops.sum(w0) / ops.where(n > 0, n, 1.0)
        else:
            assert self.weights is not None
            width = float(self.hi - self.lo)
            v = ops.sum(w0 * ops.const(self.weights, like)) * (width / ops.where(n > 0, n, width))
        ok = n > 0
        return ops.where(ok, v, 0.0), ok

    def __call__(self, x: Any, ops: Any, observed: bool) -> Any:
        w = x[:, self.j, self.lo:self.hi]
        if observed:
            v, ok = self.aggregate_observed(w, ops, x)
        else:
            v = self.aggregate(w, ops, x)
        v = _NONLINEARITIES[self.nonlinearity](v, ops)
        t = self.scale * (v - self.mean)
        return ops.where(ok, t, 0.0) if observed else t


_AGGREGATORS = ("max", "average", "monotonic_weighted_sum", "random_weighted_sum")

_NONLINEARITIES: Dict[str, Callable[[Any, Any], Any]] = {
    "identity": lambda v, ops: v,
    "abs": lambda v, ops: ops.abs(v),
    "square": lambda v, ops: v * v,
}


class AdditiveModel(SynthModel):
    """The additive model of tempora synth (format tempora-synth-model/1):
    F(x) = Σ_relevant α_j g_j(x) + β Σ_irrelevant α_j g_j(x), predicting F
    (regression) or sigmoid(F − threshold) (classification); over observed
    values only for an irregular world ("missing": "observed"). A batch
    with a missing value (NaN) is refused by the model of a complete world,
    which has no rule for it."""

    format = ADDITIVE_FORMAT

    def __init__(self, doc: Dict[str, Any]) -> None:
        super().__init__(doc)
        self.task = str(doc["task"])
        if self.task not in ("regression", "classification"):
            raise ValueError("task %r" % self.task)
        self.num_outputs = 1
        self._beta = float(doc["beta"])
        self._threshold = float(doc["threshold"])
        self._observed = doc.get("missing", "") == "observed"
        if doc.get("missing", "") not in ("", "observed"):
            raise ValueError("missing %r" % doc["missing"])
        feats = doc["features"]
        if len(feats) != self.num_features:
            raise ValueError("%d features, announces %d" % (len(feats), self.num_features))
        self._terms = [_Term(j, f, self.num_timesteps) for j, f in enumerate(feats)]

    def _forward(self, x: Any, ops: Any) -> Any:
        if not self._observed and ops.any(ops.isnan(x)):
            raise ValueError("the batch has missing values (NaN); this model (of a complete world) takes none")
        rel, irr = ops.zeros(x), ops.zeros(x)
        for t in self._terms:  # in feature order, as the program adds them
            if t.relevant:
                rel = rel + t(x, ops, self._observed)
            else:
                irr = irr + t(x, ops, self._observed)
        f = rel + self._beta * irr
        return ops.sigmoid(f - self._threshold) if self.task == "classification" else f


class OutputsModel(SynthModel):
    """The model of several outputs of tempora synth -outputs (format
    tempora-synth-outputs-model/1): unit scores z_u = bias + Σ weights·v
    over windows, v a feature's values or, for a carried feature, its last
    observed value (0 before the first); the outputs are the scores
    (horizons, steps) or the class probabilities of a nested dichotomy
    (classes). A missing value read by a feature that is not carried is
    refused, as the program refuses it."""

    format = OUTPUTS_FORMAT

    def __init__(self, doc: Dict[str, Any]) -> None:
        super().__init__(doc)
        self.kind = str(doc["kind"])
        if self.kind not in ("classes", "horizons", "steps"):
            raise ValueError("output kind %r" % self.kind)
        self.task = "classification" if self.kind == "classes" else "regression"
        self.num_outputs = int(doc["num_outputs"])
        self._carried = [int(j) for j in doc["carried"]]
        self._units: List[Tuple[float, List[Tuple[int, int, int, "npt.NDArray[np.float64]"]]]] = []
        for u in doc["units"]:
            reads = []
            for r in u["reads"]:
                j, lo, hi = int(r["feature"]), int(r["window"][0]), int(r["window"][1]) + 1
                w = np.asarray(r["weights"], dtype=np.float64)
                if not (0 <= j < self.num_features and 0 <= lo < hi <= self.num_timesteps and w.shape == (hi - lo,)):
                    raise ValueError("a read of feature %d over %s with %d weights" % (j, r["window"], w.size))
                reads.append((j, lo, hi, w))
            self._units.append((float(u["bias"]), reads))
        self._paths: List[List[Tuple[int, bool]]] = []
        if self.kind == "classes":
            self._paths = _class_paths(doc["tree"], self.num_outputs)
        if len(self._units) != (self.num_outputs - 1 if self.kind == "classes" else self.num_outputs):
            raise ValueError("%d units for %d %s" % (len(self._units), self.num_outputs, self.kind))

    def _forward(self, x: Any, ops: Any) -> Any:
        held = {j: _carry_forward(x[:, j, :], ops) for j in self._carried}
        z = []
        for bias, reads in self._units:
            v = ops.zeros(x) + bias
            for j, lo, hi, w in reads:
                series = held[j] if j in held else x[:, j, :]
                v = v + ops.sum(series[:, lo:hi] * ops.const(w, x))
            z.append(v)
        if z and ops.any(ops.isnan(ops.stack(z))):
            raise ValueError("the batch has a missing value (NaN) in a feature the model does not carry forward")
        if self.kind != "classes":
            out = ops.stack(z)
        else:
            probs = []
            for path in self._paths:
                p = None
                for node, right in path:
                    b = ops.sigmoid(z[node] if right else -z[node])
                    p = b if p is None else p * b
                probs.append(p)
            out = ops.stack(probs)
        return out[:, 0] if self.num_outputs == 1 else out


def _class_paths(tree: Sequence[Sequence[int]], k: int) -> List[List[Tuple[int, bool]]]:
    """Each class's path from the root of a nested dichotomy: (node, to its
    second child)."""
    paths: List[Optional[List[Tuple[int, bool]]]] = [None] * k

    def walk(n: int, path: List[Tuple[int, bool]]) -> None:
        for side, c in enumerate(tree[n]):
            p = path + [(n, side == 1)]
            if c < 0:
                paths[-1 - c] = p
            elif c > n:
                walk(c, p)
            else:
                raise ValueError("tree node %d has child %d" % (n, c))

    walk(0, [])
    if any(p is None for p in paths):
        raise ValueError("the tree does not reach every class")
    return [p for p in paths if p is not None]


def _carry_forward(series: Any, ops: Any) -> Any:
    """Each timestep's last observed value at or before it, 0 before the
    first observation (per instance)."""
    obs = ~ops.isnan(series)
    t = ops.const(np.arange(series.shape[-1]), series)
    last = ops.cummax(ops.where(obs, t, -1))
    vals = ops.gather(ops.where(obs, series, 0.0), ops.where(last >= 0, last, 0))
    return ops.where(last >= 0, vals, 0.0)


_FORMATS: Dict[Optional[str], Type[SynthModel]] = {
    ADDITIVE_FORMAT: AdditiveModel,
    OUTPUTS_FORMAT: OutputsModel,
}


def _module(model: SynthModel) -> Any:
    import torch

    class SynthModule(torch.nn.Module):  # type: ignore[misc]
        """A synthetic problem's model (SynthModel) as a module, float64."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model
            self._ops = _TorchOps()

        def forward(self, x: Any) -> Any:
            return model._forward(model._check(self._ops.prepare(x)), self._ops)

        def extra_repr(self) -> str:
            return repr(model)

    return SynthModule()
