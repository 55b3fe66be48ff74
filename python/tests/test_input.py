"""The cheap test of X on the explain path (_input._all_finite, and
Data.missing, whether X holds a NaN, for the hint about models that predict
NaN where all they read is missing): the common array without NaN or
infinity passes in one pass, and everything else gets the exact answer.
Whether the data is fit to explain is the program's decision
(test_irregular.py)."""

import unittest
import warnings

import numpy as np

from tempora import _input

nan, inf = np.nan, np.inf
BIG = np.finfo(np.float64).max


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
        # not proven finite, so the exact test decides (and finds no NaN).
        for X in (np.full((2, 2, 3), BIG), np.array([BIG, BIG, -BIG, -BIG] * 3).reshape(2, 2, 3)):
            self.assertIs(_input._all_finite(X), False)
            self.assertFalse(_input.as_data(X).missing)
        X = np.full((2, 2, 3), BIG)
        X[1, 0, 2] = nan
        self.assertTrue(_input.as_data(X).missing)

    def test_missing_matches_isnan(self):
        rng = np.random.default_rng(22)
        cases = [np.zeros((1, 1, 1)), np.zeros((0, 2, 1)), np.full((1, 2, 3), inf)]
        for _ in range(300):
            X = rng.standard_normal(tuple(rng.integers(1, 5, size=3)))
            for _ in range(rng.integers(0, 4)):
                X.flat[rng.integers(X.size)] = rng.choice([nan, nan, inf, -inf, BIG])
            cases.append(X)
        for X in cases:
            self.assertIs(_input.as_data(X).missing, bool(np.isnan(X).any()), X)

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
