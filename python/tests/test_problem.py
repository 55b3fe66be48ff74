"""tempora.Problem: loading a synthetic problem and predicting through
``tempora serve``."""

import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import tempora

from test_explain import without_runtime


def synth(directory, *args):
    subprocess.run([tempora.find_binary(), "synth", "-out", directory] + list(args),
                   check=True, capture_output=True)


class ProblemTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        # Without noise, a regression problem's targets are its model's
        # predictions, bit for bit.
        cls.exact = os.path.join(cls.tmp.name, "exact")
        synth(cls.exact, "-instances", "120", "-features", "5", "-timesteps", "8", "-task", "regression",
              "-noise", "0", "-seed", "3")
        cls.clf = os.path.join(cls.tmp.name, "clf")
        synth(cls.clf, "-instances", "300", "-features", "6", "-timesteps", "10", "-task", "classification",
              "-noise", "auto", "-seed", "5")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_load(self):
        p = tempora.Problem(self.clf)
        self.assertEqual(p.X.shape, (300, 6, 10))
        self.assertEqual(p.y.shape, (300,))
        self.assertEqual(p.task, "classification")
        self.assertEqual(p.seed, 5)
        self.assertEqual(p.config["features"], 6)
        with open(os.path.join(self.clf, "truth.json")) as f:
            truth = json.load(f)["features"]
        self.assertEqual(p.relevant, [t["name"] for t in truth if t["relevant"]])
        for got, want in zip(p.truth, truth):
            self.assertEqual(got.window, tuple(want["window"]))
            self.assertEqual(got.ordering_important, want["ordering_important"])
        self.assertEqual(p.feature_names, [str(j) for j in range(6)])
        self.assertIn("classification", repr(p))

    def test_predict_through_serve(self):
        with tempora.Problem(self.exact) as p:
            self.assertTrue(np.array_equal(p.predict(p.X), p.y))
            self.assertTrue(np.array_equal(p(p.X[:7]), p.y[:7]))
            proc = p._proc
            self.assertIsNotNone(proc)
            with self.assertRaisesRegex(tempora.TemporaError, "serve"):
                p.predict(np.zeros((2, 4, 8)))  # 4 features, not 5
        self.assertIsNotNone(proc.poll(), "serve still runs after close")
        with self.assertRaises(ValueError):
            tempora.Problem(self.exact).predict(np.zeros((0, 5, 8)))

    def test_python_round_trip_equals_in_process(self):
        # The problem's model served through tempora serve and explained via
        # tempora.explain gives exactly the explanation of the model run
        # inside the program: predictions cross both protocols bit for bit.
        with tempora.Problem(self.clf) as p:
            via_python = tempora.explain(p.predict, p.X, p.y, task=p.task, seed=9, permutations=30)
            direct = p.explain(seed=9, permutations=30)
        # Through the package several draws go in one request, each still
        # one call of the model: the explanations are equal, model calls
        # included (issue 31).
        a, b = json.loads(without_runtime(via_python)), json.loads(without_runtime(direct))
        self.assertEqual(a, b)
        self.assertIn("ground truth", direct.report.lower())

    def test_missing_directory(self):
        with self.assertRaisesRegex(FileNotFoundError, "not a synthetic problem"):
            tempora.Problem(os.path.join(self.tmp.name, "nope"))


if __name__ == "__main__":
    unittest.main()
