"""The generator's model, recomputed from a problem's model.json.

tempora synth writes the additive windowed model it used (format
tempora-synth-model/1, definition in its "definition" field). Recomputing it
here lets the example ask, on the data, how much each relevant feature decides
the labels, which is what a network trained on those labels can learn.
"""

import numpy as np


def aggregates(model, X):
    """Returns the M x D matrix of a_j(x_j), each feature's aggregate over its window."""
    m, d, _ = X.shape
    if d != model["num_features"] or X.shape[2] != model["num_timesteps"]:
        raise ValueError("generator: data %s does not match the model's %d x %d" % (X.shape, d, model["num_timesteps"]))
    out = np.empty((m, d))
    for f in model["features"]:
        j = f["index"]
        lo, hi = f["window"]
        w = X[:, j, lo:hi + 1]
        agg = f["aggregator"]
        if agg == "max":
            out[:, j] = w.max(axis=1)
        elif agg == "average":
            out[:, j] = w.mean(axis=1)
        elif agg in ("monotonic_weighted_sum", "random_weighted_sum"):
            out[:, j] = w @ np.asarray(f["weights"], dtype=np.float64)
        else:
            raise ValueError("generator: unknown aggregator %r" % agg)
    return out


def feature_terms(model, X):
    """Returns the M x D matrix of g_j(x_j), the standardised per-feature functions of the model."""
    a = aggregates(model, X)
    g = np.empty_like(a)
    for f in model["features"]:
        j = f["index"]
        nl = f["nonlinearity"]
        if nl == "identity":
            h = a[:, j]
        elif nl == "abs":
            h = np.abs(a[:, j])
        elif nl == "square":
            h = a[:, j] * a[:, j]
        else:
            raise ValueError("generator: unknown nonlinearity %r" % nl)
        g[:, j] = (h - f["mean"]) / f["sd"]
    return g


def coefficients(model):
    """Returns (coefficients alpha_j, relevant flags) in feature order."""
    feats = sorted(model["features"], key=lambda f: f["index"])
    return (np.array([f["coefficient"] for f in feats]), np.array([bool(f["relevant"]) for f in feats]))


def score(model, X, beta=None):
    """Returns F_beta(x) for every instance: relevant terms plus beta times the irrelevant ones.

    beta defaults to the model's noise multiplier; beta = 0 gives F_0, the
    function the labels threshold.
    """
    if beta is None:
        beta = model["beta"]
    g = feature_terms(model, X)
    alpha, rel = coefficients(model)
    w = np.where(rel, alpha, beta * alpha)
    return g @ w


def labels(model, X):
    """Returns the labels 1{F_0 > threshold} the generator assigns."""
    return (score(model, X, beta=0.0) > model["threshold"]).astype(np.float64)


def predict(model, X):
    """Returns the generator's model's predictions sigmoid(F_beta - threshold)."""
    return 1.0 / (1.0 + np.exp(-(score(model, X) - model["threshold"])))


def label_flip_rates(model, X):
    """Returns, per feature, the fraction of instances whose label changes when its term is removed.

    Removing the term alpha_j g_j from F_0 replaces the feature by its average
    effect (g_j has mean 0 over the generated instances). A relevant feature
    whose removal changes almost no label leaves almost nothing for a network
    to learn; irrelevant features have rate 0 (they are not in F_0).
    """
    g = feature_terms(model, X)
    alpha, rel = coefficients(model)
    f0 = g @ np.where(rel, alpha, 0.0)
    lab = f0 > model["threshold"]
    rates = np.zeros(len(alpha))
    for j in np.flatnonzero(rel):
        rates[j] = np.mean((f0 - alpha[j] * g[:, j] > model["threshold"]) != lab)
    return rates


def timestep_correlations(model, X):
    """Returns the D x L matrix of |corr(x_{j,t}, a_j)|: how well the value of
    feature j at timestep t predicts its window aggregate, over the instances.

    Inside the window the aggregate is computed from these values; outside,
    a non-zero correlation means the timestep carries information the
    network can use in place of the window (for example the running level of
    a trend feature after its window). Constant timesteps give 0.
    """
    a = aggregates(model, X)
    m, d, l = X.shape
    out = np.zeros((d, l))
    for j in range(d):
        aj = a[:, j] - a[:, j].mean()
        sa = np.sqrt((aj * aj).sum())
        for t in range(l):
            x = X[:, j, t] - X[:, j, t].mean()
            sx = np.sqrt((x * x).sum())
            if sa > 1e-12 and sx > 1e-12:
                out[j, t] = abs(float((x * aj).sum() / (sa * sx)))
    return out
