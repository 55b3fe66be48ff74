"""tempora.problems and tempora.evaluate on a suite: the benchmark of a
Python method against tempora's, returned as a DataFrame."""

import math
import os
import tempfile
import unittest

import numpy as np

import tempora

try:
    import pandas  # noqa: F401
    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False


class BenchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.probs = tempora.problems(suite="local", quick=True, models=2, seed=7, dir=cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.probs.close()
        cls.tmp.cleanup()

    def test_problems(self):
        self.assertEqual(len(self.probs), 2)
        p = self.probs[0]
        self.assertEqual((p.suite, p.params, p.model, p.task), ("local", {"instances": "200"}, 0, "classification"))
        self.assertEqual(p.X.shape, (200, 10, 20))
        # The truth is not an attribute; truth() reads it.
        self.assertFalse(hasattr(p, "relevant"))
        self.assertEqual(sum(f.relevant for f in p.truth()), 5)
        pred = p.predict(p.X[:4])
        self.assertEqual(pred.shape, (4,))
        self.assertTrue(np.all((pred >= 0) & (pred <= 1)))
        self.assertGreaterEqual(p.calls, 1)

    @unittest.skipUnless(HAVE_PANDAS, "pandas is not installed (apt-get install python3-pandas)")
    def test_evaluate_oracle_and_global(self):
        """A method returning each instance's exact per-instance truth
        scores 1 on every per-instance metric; one returning the global
        truth as cell scores gets the global metrics only. Both come back
        beside OCC's rows."""
        from tempora._bench import BenchProblem

        def oracle(p: BenchProblem):
            a = np.zeros(p.X[:30].shape)
            for f in p.truth():
                if f.relevant:  # every feature is a window maximum in this suite
                    lo, hi = f.window
                    w = p.X[:30, f.index, lo:hi + 1]
                    a[:, f.index, lo:hi + 1] = w == w.max(axis=1, keepdims=True)
            return a

        df = tempora.evaluate(self.probs, oracle, method="oracle", compare=["OCC"])
        self.assertEqual(set(df.index.get_level_values("method")), {"oracle", "OCC"})
        row = df.xs("oracle", level="method").iloc[0]
        for m in ("instance-timestep-auroc", "instance-timestep-auprc", "instance-feature-auprc"):
            self.assertEqual(row[m], 1.0, m)
            self.assertEqual(row[m + "_se"], 0.0, m)
        self.assertEqual(row["models"], 2)
        self.assertTrue(os.path.isdir(os.path.join(self.tmp.name, "report")))
        occ = df.xs("OCC", level="method").iloc[0]
        self.assertTrue(0 <= occ["instance-timestep-auprc"] < 1)
        # The standard error is SD / sqrt(n) over the two models.
        self.assertTrue(math.isfinite(occ["timestep-auroc_se"]))

        cells = [np.array([[1.0 if f.relevant and f.window[0] <= t <= f.window[1] else 0.0 for t in range(20)]
                           for f in p.truth()]) for p in self.probs]
        df = tempora.evaluate(self.probs, cells, method="windows", compare=())
        self.assertEqual(list(df.index.names), ["instances", "method"])
        row = df.xs("windows", level="method").iloc[0]
        self.assertEqual(row["timestep-auroc"], 1.0)
        self.assertEqual(row["feature-auprc"], 1.0)
        self.assertNotIn("instance-timestep-auprc", df.columns)

    def test_bad_outputs(self):
        with self.assertRaisesRegex(ValueError, "2 problems"):
            tempora.evaluate(self.probs, [np.zeros((10, 20))], method="x", compare=())
        with self.assertRaisesRegex(ValueError, "shape"):
            tempora.evaluate(self.probs, lambda p: np.zeros((3, 3)), method="x", compare=())
        with self.assertRaisesRegex(ValueError, "mix"):
            tempora.evaluate(self.probs, [np.zeros((10, 20)), np.zeros((5, 10, 20))], method="x", compare=())


class AttributionsOneProblemTest(unittest.TestCase):
    def test_attributions(self):
        with tempfile.TemporaryDirectory() as tmp:
            probs = tempora.problems(suite="local", quick=True, models=1, dir=tmp)
            p = probs[0]
            rng = np.random.default_rng(1)
            m = tempora.evaluate(p.path, rng.normal(size=(20, 10, 20)))
            probs.close()
        for k in ("instance-timestep-auroc", "instance-timestep-auprc", "timestep-auroc", "feature-auprc"):
            self.assertTrue(0 <= m[k] <= 1, (k, m))
        # Random attributions rank the true cells at random: AUROC near 1/2
        # (20 instances of 200 cells; the SD of one instance's AUROC with 5
        # true cells is about 0.13, of the mean about 0.03).
        self.assertLess(abs(m["instance-timestep-auroc"] - 0.5), 0.15)


if __name__ == "__main__":
    unittest.main()
