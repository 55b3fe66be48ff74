"""Gradient attributions of a differentiable model: integrated gradients
and saliency, written with torch.autograd (captum-style, for when captum is
not at hand).

    net = problem.torch_model()          # a synthetic problem's model
    a = tempora.gradients.integrated_gradients(net, X[:50], baseline=X.mean(axis=0))
    gap = tempora.gradients.completeness_gap(net, X[:50], a, baseline=X.mean(axis=0))

Both return per-instance attributions (instances, features, timesteps), or
(instances, outputs, features, timesteps) for a model of several outputs
when no output is chosen: the arrays tempora.evaluate and Problem.evaluate
score against the truth. The model must treat instances independently (a
module in eval mode): the gradient of the batch's sum is each instance's
gradient. A missing value (NaN) in x stays missing along the path and is
attributed 0. Needs PyTorch.
"""

from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

#: The quadrature rules of integrated_gradients: the path points α in [0,
#: 1] and their weights, for n intervals.
RULES = ("trapezoid", "middle", "left", "right")


def _rule(rule: str, steps: int) -> Tuple["npt.NDArray[np.float64]", "npt.NDArray[np.float64]"]:
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 1:
        raise ValueError("steps=%r: want an integer >= 1" % (steps,))
    n = int(steps)
    k = np.arange(n, dtype=np.float64)
    if rule == "trapezoid":
        w = np.full(n + 1, 1.0 / n)
        w[[0, -1]] = 0.5 / n
        return np.arange(n + 1, dtype=np.float64) / n, w
    if rule == "middle":
        return (k + 0.5) / n, np.full(n, 1.0 / n)
    if rule == "left":
        return k / n, np.full(n, 1.0 / n)
    if rule == "right":
        return (k + 1) / n, np.full(n, 1.0 / n)
    raise ValueError("rule=%r: want one of %s" % (rule, ", ".join(RULES)))


def _inputs(x: npt.ArrayLike, baseline: Optional[npt.ArrayLike]) -> Tuple[Any, Any]:
    """x and the baseline as float64 tensors of x's shape; the baseline is
    missing (NaN) where x is, so that the path keeps x's missing cells."""
    import torch

    xt = torch.as_tensor(np.asarray(x, dtype=np.float64))
    if xt.ndim != 3:
        raise ValueError("x of shape %s: want (instances, features, timesteps)" % (tuple(xt.shape),))
    b = np.zeros(1) if baseline is None else np.asarray(baseline, dtype=np.float64)
    try:
        bt = torch.as_tensor(np.broadcast_to(b, tuple(xt.shape)).copy())
    except ValueError:
        raise ValueError("baseline of shape %s does not broadcast to x's %s" % (b.shape, tuple(xt.shape))) from None
    if torch.isnan(bt).any():
        raise ValueError("the baseline has missing values (NaN)")
    return xt, torch.where(torch.isnan(xt), xt, bt)


def _output_grads(model: Any, points: Any, output: Optional[int]) -> Tuple[Any, List[Any]]:
    """The model's outputs at points (a leaf tensor) and the gradient of
    each attributed output: one, or every output of a model of several."""
    import torch

    out = model(points)
    if out.ndim == 2 and output is not None:
        if not 0 <= output < out.shape[1]:
            raise ValueError("output=%d: the model has %d outputs" % (output, out.shape[1]))
        out = out[:, output]
    elif out.ndim == 1 and output not in (None, 0):
        raise ValueError("output=%s: the model has one output" % output)
    if out.ndim not in (1, 2) or out.shape[0] != points.shape[0]:
        raise ValueError("the model returned shape %s for %d instances; want (instances,) or (instances, outputs)"
                         % (tuple(out.shape), points.shape[0]))
    cols = [out] if out.ndim == 1 else [out[:, k] for k in range(out.shape[1])]
    grads = []
    for k, c in enumerate(cols):
        (g,) = torch.autograd.grad(c.sum(), points, retain_graph=k < len(cols) - 1)
        grads.append(g)
    return out, grads


def _result(parts: List[Any], single: bool) -> "npt.NDArray[np.float64]":
    import torch

    a = parts[0] if single else torch.stack(parts, dim=1)
    out: "npt.NDArray[np.float64]" = a.detach().cpu().numpy().astype(np.float64)
    return out


def integrated_gradients(model: Any, x: npt.ArrayLike, baseline: Optional[npt.ArrayLike] = None, *,
                         steps: int = 32, rule: str = "trapezoid",
                         output: Optional[int] = None) -> "npt.NDArray[np.float64]":
    """Integrated gradients (Sundararajan et al., 2017) of model for the
    instances x (instances, features, timesteps):

        (x − b) · ∫₀¹ ∂f(b + α(x − b))/∂x dα

    the integral by a quadrature rule over steps intervals: "trapezoid"
    (steps + 1 gradients, the ends weighted ½), "middle", "left" or
    "right" (steps gradients; captum's riemann_* rules). baseline b: a
    scalar, (features, timesteps) or x's shape; default 0. output: the
    output of a model of several outputs to attribute; default every one,
    giving (instances, outputs, features, timesteps).

    Completeness: the attributions of an instance sum to f(x) − f(b) up to
    the quadrature's error (completeness_gap measures it): exact for a
    gradient linear along the path with the trapezoid or middle rule, else
    O(1/steps²) for a smooth model and O(1/steps) across a kink (a maximum,
    an absolute value) where the gradient is a subgradient.
    """
    import torch

    alphas, weights = _rule(rule, steps)
    xt, bt = _inputs(x, baseline)
    delta = torch.where(torch.isnan(xt), torch.zeros_like(xt), xt - bt)
    total: Optional[List[Any]] = None
    single = True
    for a, w in zip(alphas, weights):
        point = (bt + float(a) * delta).requires_grad_(True)
        out, grads = _output_grads(model, point, output)
        single = out.ndim == 1
        grads = [float(w) * g for g in grads]
        total = grads if total is None else [t + g for t, g in zip(total, grads)]
    assert total is not None
    return _result([delta * t for t in total], single)


def saliency(model: Any, x: npt.ArrayLike, *, absolute: bool = True,
             output: Optional[int] = None) -> "npt.NDArray[np.float64]":
    """Saliency (Simonyan et al., 2014): the gradient of model's output at
    each instance of x, in absolute value unless absolute=False (captum's
    Saliency with abs); output as for integrated_gradients. A cell with a
    missing value has gradient 0."""
    import torch

    xt, _ = _inputs(x, None)
    out, grads = _output_grads(model, xt.clone().requires_grad_(True), output)
    grads = [torch.nan_to_num(g.abs() if absolute else g, nan=0.0) for g in grads]
    return _result(grads, out.ndim == 1)


def completeness_gap(model: Any, x: npt.ArrayLike, attributions: npt.ArrayLike,
                     baseline: Optional[npt.ArrayLike] = None, *,
                     output: Optional[int] = None) -> "npt.NDArray[np.float64]":
    """Σ attributions − (f(x) − f(b)) per instance (and output): how far
    integrated gradients is from completeness, b the baseline as
    integrated_gradients takes it (missing where x is)."""
    import torch

    xt, bt = _inputs(x, baseline)
    with torch.no_grad():
        fx, fb = model(xt), model(bt)
    if fx.ndim == 2 and output is not None:
        fx, fb = fx[:, output], fb[:, output]
    a = np.asarray(attributions, dtype=np.float64)
    diff = (fx - fb).detach().cpu().numpy()
    gap: "npt.NDArray[np.float64]" = np.nansum(a, axis=(-2, -1)) - diff
    return gap
