"""The benchmark's case "sum" (python/bench/time_vs_permutation.py): issue
22's regression problem, 500 x 100 x 200 by default with 5 relevant
features, and a NumPy model, the weighted sum of each relevant feature's
mean over its window (about 0.2-0.4 µs per instance)."""

import time

import numpy as np

DEFAULT_SHAPE = (500, 100, 200)
DEFAULT_RELEVANT = 5


def truth(d, l, k, length):
    """k relevant features at spread indices, each with its own window of
    the given length, and weights of alternating sign."""
    feats = [int(round((i + 0.5) * d / k)) for i in range(k)]
    windows = []
    for i in range(k):
        start = int((i + 1) * (l - length) / (k + 1))
        windows.append((start, start + length - 1))
    weights = [(1.0 if i % 2 == 0 else -1.0) * (1.0 + 0.25 * i) for i in range(k)]
    return feats, windows, weights


def model_of(feats, windows, weights, work_us=0.0):
    """The model: the weighted sum of each relevant feature's mean over its
    window, plus, with work_us > 0, work_us µs of CPU per instance spent
    busy (counted on the calling thread's CPU clock, so that the model's
    cost in CPU does not depend on the machine's load): a stand-in for a
    model that does real work per instance."""
    def predict(batch):
        end = time.thread_time() + work_us * 1e-6 * len(batch)
        out = np.zeros(len(batch))
        for j, (s, e), w in zip(feats, windows, weights):
            out += w * batch[:, j, s:e + 1].mean(axis=1)
        while work_us > 0 and time.thread_time() < end:
            pass
        return out
    return predict


def make(shape, relevant, seed, args):
    """The case: data, targets, the model and the truth."""
    m, d, l = shape
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d, l))
    feats, windows, weights = truth(d, l, relevant, max(1, l // 10))
    y = model_of(feats, windows, weights)(X) + rng.normal(scale=0.1, size=m)
    info = {"model": "the weighted sum of each relevant feature's mean over its window",
            "work_us": args.work_us}
    return X, y, model_of(feats, windows, weights, args.work_us), feats, windows, info
