"""The yardsticks of python/bench/time_vs_permutation.py: grouped
permutation importance (each feature's whole block, all its timesteps,
permuted across instances; the importance is the baseline R^2 minus the
permuted R^2, per repeat). Each takes (predict, X, y, repeats, seed) and
returns the importances, (features, repeats).

- numpy (the default): vectorised as a user would write it with NumPy: one
  working copy of X, and per feature and repeat the feature's block
  replaced by a permutation of its rows in one indexing, then restored.
  1 + D x repeats calls of predict on all M instances.
- sklearn: scikit-learn's permutation_importance, on an estimator that
  sees each whole feature as one column of objects. The same calls, but
  slower than the NumPy yardstick, most of it turning the object columns
  back into arrays: as a yardstick it flatters TIME.
"""

import numpy as np


def r2(y, p):
    return 1.0 - float(((y - p) ** 2).sum()) / float(((y - y.mean()) ** 2).sum())


def grouped_pi_numpy(predict, X, y, repeats, seed):
    rng = np.random.default_rng(seed)
    base = r2(y, predict(X))
    Xp = X.copy()
    imp = np.zeros((X.shape[1], repeats))
    for j in range(X.shape[1]):
        for r in range(repeats):
            Xp[:, j, :] = X[rng.permutation(X.shape[0]), j, :]
            imp[j, r] = base - r2(y, predict(Xp))
        Xp[:, j, :] = X[:, j, :]
    return imp


def grouped_pi_sklearn(predict, X, y, repeats, seed):
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.inspection import permutation_importance

    m, d, _ = X.shape

    class Seq(RegressorMixin, BaseEstimator):
        def fit(self, Xo, yo):
            return self

        def predict(self, Xo):
            return predict(np.stack([np.stack(list(row)) for row in Xo]))

    Xo = np.empty((m, d), dtype=object)
    for i in range(m):
        for j in range(d):
            Xo[i, j] = X[i, j]
    return permutation_importance(Seq().fit(Xo, y), Xo, y, n_repeats=repeats, random_state=seed).importances


# name -> (function, label as printed)
YARDSTICKS = {
    "numpy": (grouped_pi_numpy, "grouped permutation importance, NumPy"),
    "sklearn": (grouped_pi_sklearn, "grouped permutation importance, scikit-learn (object columns; slower)"),
}
