"""Tests of tempora.explain's batch size and budget keywords (batch=,
max_calls=, max_time=) and of the run's estimates, against the tempora
program."""

import unittest
import warnings

import numpy as np

import tempora


def setUpModule():
    tempora.find_binary()


def _problem():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 5, 8))

    def f(x):  # uses features 1 and 3
        return 2 * x[:, 1, 2:5].mean(1) - 1.5 * x[:, 3, 4:].mean(1)
    y = f(X) + rng.normal(scale=0.3, size=200)
    return f, X, y


def _settled(feature, step=None):
    """A feature's fields that a run stopped at step (its Feature.undecided)
    must report as the full run does."""
    d = {"important": feature.important, "score": feature.score, "p_value": feature.p_value}
    if step in (None, "window ordering"):
        d["window"] = feature.window
    return d


class BudgetTest(unittest.TestCase):
    def test_max_calls(self):
        f, X, y = _problem()
        full = tempora.explain(f, X, y, task="regression", seed=1, progress=False)
        self.assertIsNone(full.accounting.stopped_by)
        self.assertEqual(len(full.estimates), 2)
        self.assertEqual(full.estimates[0].after, "baseline")
        self.assertGreaterEqual(full.estimates[1].model_calls, full.accounting.model_calls)
        for budget in (5, full.accounting.model_calls // 2):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                e = tempora.explain(f, X, y, task="regression", seed=1, progress=False, max_calls=budget)
            self.assertEqual(e.accounting.stopped_by, "max-calls")
            self.assertTrue(e.accounting.incomplete)
            self.assertLessEqual(e.accounting.model_calls, budget)
            undecided = [g for g in e.features if g.undecided]
            self.assertTrue(undecided)
            self.assertTrue(any("undecided" in str(w.message) for w in caught), [str(w.message) for w in caught])
            for got, want in zip(e.features, full.features):
                if got.undecided == "overall":
                    self.assertFalse(got.important)
                    continue
                self.assertEqual(_settled(got, got.undecided), _settled(want, got.undecided), got.name)

    def test_max_time(self):
        f, X, y = _problem()

        def slow(x):
            import time
            time.sleep(0.01)
            return f(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = tempora.explain(slow, X, y, task="regression", progress=False, max_time=0.2)
        self.assertEqual(e.accounting.stopped_by, "max-time")

    def test_batch(self):
        f, X, y = _problem()
        sizes = []

        def counted(x):
            sizes.append(len(x))
            return f(x)
        full = tempora.explain(f, X, y, task="regression", seed=1, progress=False)
        e = tempora.explain(counted, X, y, task="regression", seed=1, progress=False, batch=64)
        self.assertEqual(e.accounting.batch.size, 64)
        self.assertFalse(e.accounting.batch.auto)
        self.assertLessEqual(max(sizes), 64)
        self.assertEqual([_settled(g) for g in e.features], [_settled(g) for g in full.features])
        self.assertTrue((e.cells == full.cells).all())
        t = tempora.explain(f, X, y, task="regression", seed=1, progress=False, batch="64")
        self.assertEqual(t.to_dict()["features"], e.to_dict()["features"])  # batch=64 is batch="64"
        self.assertEqual(t.accounting.batch.size, 64)
        with self.assertRaises(TypeError):
            tempora.explain(f, X, y, task="regression", progress=False, batch=True)
        a = tempora.explain(f, X, y, task="regression", seed=1, progress=False, batch="auto")
        self.assertTrue(a.accounting.batch.auto)
        self.assertEqual(a.accounting.batch.costs[0].size, 200)
        self.assertTrue((a.cells == full.cells).all())


if __name__ == "__main__":
    unittest.main()
