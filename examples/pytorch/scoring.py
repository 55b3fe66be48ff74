"""What the learned-model example adds to tempora's scoring: window exactness
and the random feature sets of the retraining check.

Everything else comes from the tempora package: the benchmark's metrics from
`tempora evaluate` through tempora.evaluate (the benchmark's own rules,
docs/decisions.md, decision 14, so a learned network is scored exactly as
the paper-suite methods are), and the benchmark's feature scores and top-n
ranking (PERM's feature set) from tempora.feature_scores and
tempora.top_features.
"""

import numpy as np


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


def random_features(n_features, k, seed):
    """Returns k features drawn uniformly without replacement, in index order."""
    rng = np.random.default_rng(seed)
    return sorted(int(j) for j in rng.choice(n_features, size=k, replace=False))
