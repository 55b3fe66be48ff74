"""What a model states about the input it takes, checked against the data
before anything runs.

A fitted scikit-learn estimator or pipeline states the width of its rows
(``n_features_in_``); a PyTorch module's first layer states the features
it reads per timestep (a recurrent layer's ``input_size``, a Conv1d's
``in_channels``). Where the model states its input:

- an estimator whose ``n_features_in_`` is features × timesteps is given
  each instance flattened, the batch in the caller's layout reshaped to
  ``(m, -1)``: feature-major for layout="ndl" and DataFrames (column
  ``j*L + t`` holds feature j at timestep t), time-major for "nld" (column
  ``t*D + j``), exactly ``X.reshape(len(X), -1)`` of the X the caller
  passes; one whose ``n_features_in_`` is ``X.shape[1]`` was fitted on 3-D
  arrays of X's layout (a pipeline that flattens them itself) and is given
  the batches as they are, with an error saying so if it fails on them
  (a model of one value per feature states the same width); any other
  width is an error saying what the model expects and what X gives;
- a first layer that reads as many features as X has timesteps (and not
  as many as X has features) contradicts X's layout and is refused,
  naming layout=.

A linear first layer states nothing about the layout: it reads the last
axis of whatever its forward gives it, which may be the features
(per-timestep projections) or the timesteps (linear models of each
feature's series), so both are legitimate.
"""

import sys
from typing import Any, List, Optional, Tuple

#: The order of a flattened row, for messages and docs, by layout.
ORDER = {
    "ndl": "feature-major: X.reshape(len(X), -1) of the (instances, features, timesteps) array, column j*L + t "
           "holding feature j at timestep t",
    "nld": "time-major: X.reshape(len(X), -1) of the (instances, timesteps, features) array, column t*D + j "
           "holding feature j at timestep t",
}


def row_width(model: Any) -> Optional[int]:
    """The width of the rows a fitted scikit-learn estimator or pipeline
    (or its bound predict/predict_proba) takes: its n_features_in_, or
    None for a model that does not state it (not fitted, not
    scikit-learn-like, or a pipeline whose first step does not)."""
    owner = getattr(model, "__self__", model)
    try:
        n = getattr(owner, "n_features_in_", None)
    except Exception:  # a property that fails on an unfitted model
        return None
    if n is None or isinstance(n, bool):
        return None
    try:
        return int(n)
    except (TypeError, ValueError):
        return None


#: How a model that states its row width takes its batches: each
#: instance flattened into one row, or the 3-D batch as X has it (a model
#: fitted on arrays of X's layout, whose n_features_in_ is their axis 1).
FLAT, ARRAYS = "flat", "arrays"


def rows(model: Any, d: int, length: int, layout: str, source: str) -> str:
    """How model takes its batches, by the width it states: FLAT when it
    states rows of d × length values; ARRAYS when it states the size of
    axis 1 of X as passed (features for "ndl" and DataFrames, timesteps
    for "nld"), as a model fitted on such arrays does (a pipeline that
    flattens them itself); "" when it states nothing. Any other width is
    a ValueError saying what the model expects and what X gives."""
    n = row_width(model)
    if n is None:
        return ""
    if n == d * length:
        return FLAT
    axis1 = length if layout == "nld" and source != "frame" else d
    if n == axis1:
        return ARRAYS
    order = ORDER["ndl" if source == "frame" else layout]
    hint = ""
    if n == length and source != "frame":
        hint = ("; %d is X's number of timesteps: a model fitted on one feature's series, or on arrays laid out "
                "(instances, timesteps, features), for which pass layout='nld'" % n)
    elif n == d:
        hint = ("; %d is X's number of features, on axis 2 of X with layout='nld': a model fitted on arrays laid "
                "out (instances, features, timesteps) takes layout='ndl'" % n)
    raise ValueError(
        "predict: the model states rows of %d values (n_features_in_=%d), but X has %d features x %d timesteps: a "
        "scikit-learn model of 2-D rows is given each instance flattened into %d values (%s)%s"
        % (n, n, d, length, d * length, order, hint))


def arrays_failed(n: int, shape: Tuple[int, ...], layout: str, exc: BaseException) -> ValueError:
    """The error of a model that states n_features_in_=n, the size of axis
    1 of X, and failed on a 3-D batch of this shape: if it was fitted on
    one value per feature, it is no model of sequences."""
    return ValueError(
        "predict: the model states n_features_in_=%d, the size of axis 1 of X (layout=%r), so it was given 3-D "
        "batches as X has them, of shape %s, and it failed on them (%s: %s). A model fitted on arrays of X's layout "
        "takes them; a model of 2-D rows must be fitted on each instance flattened, %d values (%s), and is then "
        "given such rows; a model fitted on one value per feature cannot explain sequences"
        % (n, layout, tuple(shape), type(exc).__name__, exc, shape[1] * shape[2], ORDER[layout]))


def _first_layer(module: Any) -> Any:
    """The first submodule (in registration order) with parameters of its
    own, or None."""
    for sub in module.modules():
        if next(iter(sub.parameters(recurse=False)), None) is not None:
            return sub
    return None


def stated_features(module: Any) -> Optional[Tuple[int, str]]:
    """The number of features per timestep a PyTorch module's first layer
    reads, and how it says so ("nn.LSTM(input_size=8)"); None when its
    first layer says nothing about the features (a linear layer, an
    embedding, a parameter of the module itself)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    layer = _first_layer(module)
    nn = torch.nn
    if isinstance(layer, nn.RNNBase):
        return int(layer.input_size), "nn.%s(input_size=%d)" % (type(layer).__name__, layer.input_size)
    if isinstance(layer, nn.Conv1d):
        return int(layer.in_channels), "nn.%s(in_channels=%d)" % (type(layer).__name__, layer.in_channels)
    return None


def check_layout(module: Any, d: int, length: int, layout: str, source: str) -> None:
    """Refuse X whose layout contradicts the features the module's first
    layer reads: it reads as many features as X has timesteps, and not
    as many as X has features (the axes look swapped). A DataFrame's
    features are its columns, not an axis, and are not checked."""
    stated = stated_features(module)
    if stated is None or source == "frame":
        return
    n, layer = stated
    if n == d or n != length:
        return
    other = "nld" if layout == "ndl" else "ndl"
    shape = {"ndl": "(instances, features, timesteps)", "nld": "(instances, timesteps, features)"}
    raise ValueError(
        "X does not fit the model: its first layer %s reads %d features per timestep, but with layout=%r X is %s, "
        "%d features x %d timesteps, so the model would read its timesteps as features. If X is laid out %s, pass "
        "layout=%r" % (layer, n, layout, shape[layout], d, length, shape[other], other))


def _mode_dependent(module: Any, torch: Any) -> bool:
    """Whether module's own behaviour depends on training mode: dropout,
    batch (and instance) normalisation, a recurrent layer or attention
    with dropout, or a module of a class outside torch, whose forward may
    read self.training."""
    nn = torch.nn
    if isinstance(module, (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._NormBase)):
        return True
    if isinstance(module, (nn.RNNBase, nn.MultiheadAttention)):
        return float(getattr(module, "dropout", 0.0) or 0.0) > 0
    return not (type(module).__module__ or "").startswith("torch.")


def training_modules(module: Any) -> List[str]:
    """The submodules of module (module itself: "model"), as "name
    (class)", in training mode whose behaviour depends on it (_mode_dependent): empty
    when the module predicts as in evaluation mode, even if a container
    around evaluated modules (nn.Sequential(net, nn.Sigmoid()) made after
    net.eval()) is itself in training mode."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    return ["%s (%s)" % (name or "model", type(sub).__name__) for name, sub in module.named_modules()
            if sub.training and _mode_dependent(sub, torch)]
