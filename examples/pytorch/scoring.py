"""Scoring explanations of learned networks against the generator's truth, and
choosing the feature sets of the retraining check.

Detection metrics come from `tempora evaluate` (the benchmark's own rules,
docs/decisions.md, decision 14), so a learned network is scored exactly as
the paper-suite methods are; window exactness and the feature rankings are
computed here.
"""

import json
import os
import subprocess
import tempfile

import numpy as np

# The benchmark's selection rule per method: TIME selects every cell of its
# important features' windows, the baselines their top-n cells.
MODES = {"time": "all-non-zero", "perm": "top-n", "sage-m": "top-n", "sage": "top-n", "lime": "top-n"}


def evaluate(binary, problem_dir, explanation_json, method):
    """Returns the metrics of `tempora evaluate` for an explanation (a JSON string) as a dict."""
    with tempfile.TemporaryDirectory(prefix="tempora-learned-") as tmp:
        path = os.path.join(tmp, "scores.json")
        with open(path, "w") as f:
            f.write(explanation_json)
        cmd = [binary, "evaluate", "-problem", problem_dir, "-scores", path, "-mode", MODES[method], "-json"]
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("tempora evaluate failed: %s" % r.stderr.strip())
    return json.loads(r.stdout)


def window_exactness(explanation, truth):
    """Returns (exact, found): of the relevant features TIME found important, how many
    have a window equal to the generator's, and how many there are."""
    exact = found = 0
    for f, t in zip(explanation.features, truth["features"]):
        if f.important and t["relevant"]:
            found += 1
            if f.window is not None and list(f.window) == list(t["window"]):
                exact += 1
    return exact, found


def feature_scores(cells):
    """Returns each feature's score under decision 14: the mean of its cells' magnitudes
    that are at least 1e-10 (0 when none is)."""
    a = np.abs(np.asarray(cells, dtype=np.float64))
    a[a < 1e-10] = 0.0
    nz = (a > 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(nz > 0, a.sum(axis=1) / np.maximum(nz, 1), 0.0)
    return s


def top_features(cells, k):
    """Returns the k features with the highest scores (ties to the lower index), in index order."""
    s = feature_scores(cells)
    order = sorted(range(len(s)), key=lambda j: (-s[j], j))
    return sorted(order[:k])


def random_features(n_features, k, seed):
    """Returns k features drawn uniformly without replacement, in index order."""
    rng = np.random.default_rng(seed)
    return sorted(int(j) for j in rng.choice(n_features, size=k, replace=False))
