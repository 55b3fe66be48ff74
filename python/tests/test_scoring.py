"""Scoring against a synthetic problem's truth: tempora.evaluate (the
program's metrics) and the benchmark's feature scores and top-n selection
(feature_scores, top_features, which read ``tempora rank``): checked by
hand and against what tempora evaluate selects, so that the two commands
apply one rule."""

import os
import tempfile
import unittest

import numpy as np

import tempora

from test_problem import synth


class ScoringTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.tmp.name, "p")
        synth(cls.dir, "-instances", "200", "-features", "6", "-timesteps", "8", "-task", "regression",
              "-noise", "0", "-seed", "3")
        cls.problem = tempora.Problem(cls.dir)
        cls.relevant = np.array([f.relevant for f in cls.problem.truth])

    @classmethod
    def tearDownClass(cls):
        cls.problem.close()
        cls.tmp.cleanup()

    def truth_cells(self):
        """Cells that mark exactly the relevant features' windows."""
        cells = np.zeros((6, 8))
        for f in self.problem.truth:
            if f.relevant:
                cells[f.index, f.window[0]:f.window[1] + 1] = 1.0
        return cells

    def test_perfect_scores(self):
        m = tempora.evaluate(self.dir, self.truth_cells())
        self.assertEqual((m["feature-power"], m["feature-fdr"], m["timestep-power"], m["timestep-fdr"]), (1, 0, 1, 0))
        self.assertEqual(self.problem.evaluate(self.truth_cells(), mode="all-non-zero"), m)
        with self.assertRaisesRegex(ValueError, "matrix"):
            tempora.evaluate(self.dir, np.zeros(8))
        with self.assertRaisesRegex(tempora.TemporaError, "4 × 8 scores"):
            tempora.evaluate(self.dir, np.ones((4, 8)))

    def test_explanations_are_scored_by_their_method(self):
        for method in ("time", "perm"):
            e = self.problem.explain(method, seed=2, permutations=19)
            m = self.problem.evaluate(e)
            self.assertEqual(m, tempora.evaluate(self.dir, e, method=e.method))
            self.assertTrue(0 <= m["feature-power"] <= 1, m)
            # A baseline's feature scores are the benchmark's (decision 14).
            if method == "perm":
                got = tempora.feature_scores(e.cells)
                want = [f.score for f in e.features]
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)

    def test_feature_scores_by_hand(self):
        cells = np.array([[0.0, 0.0, 0.0, 0.0],       # nothing: 0
                          [-2.0, 0.0, 0.0, 0.0],      # magnitude, mean of non-zero cells: 2
                          [1.0, 1.0, 1.0, 1e-12],     # 1e-12 counts as zero: 1
                          [2.0, 2.0, 0.0, 0.0]])      # 2, tied with feature 1
        np.testing.assert_allclose(tempora.feature_scores(cells), [0, 2, 1, 2])
        self.assertEqual(tempora.top_features(cells, 1), [1])  # ties to the lower index
        self.assertEqual(tempora.top_features(cells, 3), [1, 2, 3])
        self.assertEqual(tempora.top_features(cells, 0), [])
        with self.assertRaisesRegex(ValueError, "matrix"):
            tempora.feature_scores([1.0, 2.0])
        # Scores are finite, as for tempora evaluate (the program refuses
        # the file).
        with self.assertRaises(tempora.TemporaError):
            tempora.feature_scores([[1.0, np.inf]])

    def test_near_zero_threshold_is_the_programs(self):
        # The relevant features' windows at just under and just over the
        # benchmark's zero threshold: the program's all-non-zero power counts
        # the relevant features with a non-zero score, as feature_scores does.
        cells = self.truth_cells()
        rel = np.flatnonzero(self.relevant)
        self.assertGreaterEqual(len(rel), 2)
        cells[rel[0]] *= 0.99e-10
        cells[rel[1:]] *= 1.01e-10
        m = tempora.evaluate(self.dir, cells, mode="all-non-zero")
        nonzero = tempora.feature_scores(cells) > 0
        self.assertEqual(m["feature-power-all"], nonzero[self.relevant].mean())
        self.assertEqual(m["feature-power-all"], (len(rel) - 1) / len(rel))

    def test_top_features_is_the_programs_top_n(self):
        # Random scores with many ties (a few distinct values, some zero):
        # the program's top-n feature power equals that of top_features with
        # n = min(#relevant, #non-zero), ties to the lower index in both.
        rng = np.random.default_rng(11)
        n_true = int(self.relevant.sum())
        for trial in range(40):
            cells = rng.integers(0, 3, size=(6, 8)) * rng.choice([-1.0, 1.0], size=(6, 8))
            cells[rng.random(6) < 0.3] = 0
            s = tempora.feature_scores(cells)
            n = min(n_true, int((s > 0).sum()))
            top = tempora.top_features(cells, n)
            self.assertEqual(top, sorted(top))
            power = self.relevant[top].sum() / n_true
            m = tempora.evaluate(self.dir, cells)
            self.assertAlmostEqual(m["feature-power"], power, places=12, msg="trial %d" % trial)
        self.assertEqual(tempora.top_features([[0, 2], [1, 1], [2, 0]], 1), [0])
        self.assertEqual(tempora.top_features([[0, 2], [1, 1], [2, 0]], 0), [])


if __name__ == "__main__":
    unittest.main()
