"""The cheap checks of X on the explain path (_input._all_finite and what
_observed returns): the common array without NaN or infinity passes in one
pass, and everything else gets the exact checks, with the same answers and
messages as before."""

import unittest
import warnings

import numpy as np

from tempora import _input

nan, inf = np.nan, np.inf
BIG = np.finfo(np.float64).max


def observed_reference(X, instances=None, names=None, where=str):
    """_observed as it was before its fast path: the exact checks on every
    array. Returns whether X has a missing value."""
    bad = np.isinf(X)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError("X holds %d infinite values (the first at %s); a missing value is NaN, and infinities are "
                         "errors" % (int(bad.sum()), where(k)))
    seen = ~np.isnan(X)
    by_instance = seen.any(axis=(1, 2))
    if not by_instance.all():
        i = int(np.flatnonzero(~by_instance)[0])
        label = repr(instances[i]) if instances is not None else str(i)
        raise ValueError("X: instance %s has no observed value (every value is NaN or masked)" % label)
    by_feature = seen.any(axis=(0, 2))
    if not by_feature.all():
        j = int(np.flatnonzero(~by_feature)[0])
        label = repr(names[j]) if names is not None else str(j)
        raise ValueError("X: feature %s is never observed (every value is NaN or masked)" % label)
    return bool(np.isnan(X).any())


def outcome(f, X):
    try:
        return ("ok", f(X))
    except ValueError as exc:
        return ("error", str(exc))


class AllFiniteTest(unittest.TestCase):
    def setUp(self):
        # An overflowing sum must not warn (warnings are errors here).
        caught = warnings.catch_warnings()
        caught.__enter__()
        self.addCleanup(caught.__exit__, None, None, None)
        warnings.simplefilter("error")

    def test_cases(self):
        base = np.arange(24.0).reshape(2, 3, 4) - 10
        for name, edit, want in [
            ("no NaN", None, True),
            ("NaN", (1, 2, 3, nan), False),
            ("inf", (0, 0, 0, inf), False),
            ("-inf", (1, 1, 1, -inf), False),
        ]:
            X = base.copy()
            if edit is not None:
                X[edit[:3]] = edit[3]
            self.assertIs(_input._all_finite(X), want, name)

    def test_overflowing_sum(self):
        # Finite values whose sum overflows to inf, or to inf - inf = NaN:
        # not proven finite, so the exact check decides (and finds no
        # missing value).
        for X in (np.full((2, 2, 3), BIG), np.array([BIG, BIG, -BIG, -BIG] * 3).reshape(2, 2, 3)):
            self.assertIs(_input._all_finite(X), False)
            self.assertEqual(outcome(lambda a: _input._observed(a, None, None, str), X), ("ok", False))
            self.assertFalse(_input.as_data(X).missing)
        X = np.full((2, 2, 3), BIG)
        X[1, 0, 2] = nan
        self.assertEqual(outcome(lambda a: _input._observed(a, None, None, str), X), ("ok", True))
        X[0, 1, 1] = -inf
        self.assertEqual(outcome(lambda a: _input._observed(a, None, None, str), X),
                         outcome(observed_reference, X))

    def test_observed_matches_reference(self):
        rng = np.random.default_rng(22)
        cases = [np.zeros((1, 1, 1)), np.zeros((0, 2, 0)), np.zeros((2, 0, 3))]
        for _ in range(300):
            X = rng.standard_normal(tuple(rng.integers(1, 5, size=3)))
            for _ in range(rng.integers(0, 4)):
                X.flat[rng.integers(X.size)] = rng.choice([nan, nan, inf, -inf, BIG])
            if rng.integers(4) == 0:  # an instance or a feature with nothing observed
                if rng.integers(2):
                    X[rng.integers(X.shape[0])] = nan
                else:
                    X[:, rng.integers(X.shape[1])] = nan
            cases.append(X)
        for X in cases:
            self.assertEqual(outcome(lambda a: _input._observed(a, None, None, str), X),
                             outcome(observed_reference, X), X)

    def test_data_missing(self):
        X = np.arange(12.0).reshape(2, 2, 3)
        self.assertFalse(_input.as_data(X).missing)
        X[0, 1, 2] = nan
        self.assertTrue(_input.as_data(X).missing)
        self.assertTrue(_input.as_data(np.ones((2, 2, 3)), mask=X == X).missing)
        self.assertTrue(_input.as_data([np.ones((2, 3)), np.ones((2, 2))]).missing)
        self.assertFalse(_input.as_data([np.ones((2, 3)), np.ones((2, 3))]).missing)


if __name__ == "__main__":
    unittest.main()
