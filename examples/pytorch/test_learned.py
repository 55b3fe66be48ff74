"""Tests of the learned-model example, and its smoke test (make test-learned).

    cd examples/pytorch && TEMPORA=../../bin/tempora /usr/bin/python3 -m unittest -v test_learned

Tests that need PyTorch or the tempora binary skip, saying so, when they are
missing. The smoke test runs the whole pipeline at the "smoke" scale (one
problem of 4 features x 8 timesteps, tiny networks, two epochs) and checks
that it writes every table and that a rerun gives the same records.
"""

import contextlib
import io
import json
import math
import os
import pickle
import shutil
import sys
import tempfile
import unittest

import numpy as np

from _testenv import BINARY, HAVE_BINARY, HAVE_TORCH, NO_BINARY, NO_TORCH, ROOT

import common  # noqa: E402
import scoring  # noqa: E402

if HAVE_TORCH:
    import torch


def brute_auroc(y, s):
    """The definition: P(score of a positive > score of a negative), ties one half."""
    pos = [a for a, l in zip(s, y) if l]
    neg = [a for a, l in zip(s, y) if not l]
    total = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return total / (len(pos) * len(neg))


class TestAUROC(unittest.TestCase):
    def test_hand_cases(self):
        # Four instances: of the 2 x 2 (positive, negative) pairs, only
        # (0.35, 0.4) is ordered wrongly, so the AUROC is 3/4.
        self.assertEqual(common.auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 0.75)
        self.assertEqual(common.auroc([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8]), 1.0)
        self.assertEqual(common.auroc([0, 1, 0, 1], [0.9, 0.1, 0.8, 0.2]), 0.0)
        # Ties count one half: every pair tied gives 0.5; here the pairs are
        # (0.5 vs 0.5: tie), (0.5 vs 0.2: win), (0.7 vs 0.5: win), (0.7 vs 0.2: win).
        self.assertEqual(common.auroc([0, 1], [0.5, 0.5]), 0.5)
        self.assertEqual(common.auroc([0, 1, 0, 1], [0.5, 0.5, 0.2, 0.7]), 3.5 / 4)

    def test_matches_definition_with_ties(self):
        rng = np.random.default_rng(3)
        for n in (2, 7, 50, 301):
            y = rng.integers(0, 2, size=n)
            y[0], y[1] = 0, 1
            s = rng.integers(0, 6, size=n).astype(float)  # many ties
            self.assertAlmostEqual(common.auroc(y, s), brute_auroc(y, s), places=12)

    def test_invariant_to_monotone_transform(self):
        rng = np.random.default_rng(4)
        y = rng.integers(0, 2, size=200)
        s = rng.normal(size=200)
        self.assertEqual(common.auroc(y, s), common.auroc(y, np.exp(3 * s)))

    def test_bad_input(self):
        self.assertTrue(math.isnan(common.auroc([1, 1], [0.1, 0.2])))
        with self.assertRaises(ValueError):
            common.auroc([0, 1], [0.1])
        with self.assertRaises(ValueError):
            common.auroc([0, 1], [0.1, float("nan")])


class TestSeedsAndSets(unittest.TestCase):
    def test_derive_seed(self):
        self.assertEqual(common.derive_seed(1, "train", 0, "lstm"), common.derive_seed(1, "train", 0, "lstm"))
        seeds = {common.derive_seed(s, k, i) for s in (1, 2) for k in ("a", "b") for i in range(5)}
        self.assertEqual(len(seeds), 20)
        self.assertLess(common.derive_seed(7, "x"), 1 << 63)

    def test_random_features(self):
        a = scoring.random_features(10, 4, 99)
        self.assertEqual(a, scoring.random_features(10, 4, 99))
        self.assertEqual(len(set(a)), 4)
        self.assertEqual(a, sorted(a))
        self.assertEqual(scoring.random_features(10, 0, 1), [])

    def test_split(self):
        tr, te, ho = common.split(10, 5, 3)
        self.assertEqual(list(tr), [0, 1, 2, 3, 4])
        self.assertEqual(list(te), [5, 6, 7])
        self.assertEqual(list(ho), [8, 9])
        with self.assertRaises(ValueError):
            common.split(5, 4, 2)


@unittest.skipUnless(HAVE_BINARY, NO_BINARY)
class TestGenerator(unittest.TestCase):
    def test_recomputed_model_gives_the_labels_and_predictions(self):
        import generator
        with tempfile.TemporaryDirectory() as tmp:
            p = common.synth(BINARY, os.path.join(tmp, "p"), 5, 400)
            # The labels are 1{F_0 > threshold}: recomputed exactly.
            np.testing.assert_array_equal(generator.labels(p.model, p.X), p.y)
            # tempora serve answers with the generator's own predictions.
            sys.path.insert(0, os.path.join(ROOT, "python"))
            import tempora
            with tempora.Problem(p.dir, binary=BINARY) as tp:
                np.testing.assert_allclose(generator.predict(p.model, p.X[:50]), tp.predict(p.X[:50]), rtol=1e-9, atol=1e-12)
            rates = generator.label_flip_rates(p.model, p.X)
            rel = set(p.relevant)
            for j, r in enumerate(rates):
                if j in rel:
                    self.assertGreaterEqual(r, 0.0)
                else:
                    self.assertEqual(r, 0.0)
            self.assertGreater(max(rates), 0.0)


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class TestNets(unittest.TestCase):
    def setUp(self):
        import nets
        self.nets = nets
        nets.configure_torch(1)
        rng = np.random.default_rng(0)
        self.X = rng.normal(size=(300, 3, 6)) * [[[1.0], [5.0], [0.1]]] + [[[0.0], [2.0], [-1.0]]]
        self.y = (self.X[:, 0, 2:5].mean(axis=1) > 0).astype(float)

    def test_lstm_fast_inference_equals_forward(self):
        net = self.nets.train("lstm", self.X, self.y, 1, 1, 8)
        xt = torch.as_tensor(self.X, dtype=torch.float32)
        with torch.no_grad():
            a = net(xt).numpy()
            b = net.infer(xt).numpy()
        # float32 products summed in a different order: agreement to a few
        # units in the last place of logits of order 1.
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)

    def test_training_is_reproducible_and_factory_round_trips(self):
        for arch in self.nets.ARCHITECTURES:
            a = self.nets.predictor(self.nets.train(arch, self.X, self.y, 7, 2, 4))(self.X)
            net = self.nets.train(arch, self.X, self.y, 7, 2, 4)
            b = self.nets.predictor(net)(self.X)
            np.testing.assert_array_equal(a, b)
            f = pickle.loads(pickle.dumps(self.nets.Factory(arch, net, 1)))
            np.testing.assert_array_equal(f()(self.X), b)
            c = self.nets.predictor(self.nets.train(arch, self.X, self.y, 8, 2, 4))(self.X)
            self.assertFalse(np.array_equal(b, c), "another seed gives another network")

    def test_feature_subset_predictor(self):
        net = self.nets.train("cnn", self.X[:, [0, 2], :], self.y, 1, 1, 4)
        p = self.nets.predictor(net, [0, 2])
        np.testing.assert_array_equal(p(self.X), self.nets.predictor(net)(self.X[:, [0, 2], :]))

    def test_no_features_is_an_error(self):
        with self.assertRaises(ValueError):
            self.nets.train("lstm", self.X[:, []], self.y, 1, 1, 4)
        with self.assertRaises(ValueError):
            self.nets.build("transformer", 3, 6, np.zeros(3), np.ones(3), 4)


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
@unittest.skipUnless(HAVE_BINARY, NO_BINARY)
class TestSmoke(unittest.TestCase):
    def test_pipeline(self):
        import learned

        def run(*args):
            with contextlib.redirect_stdout(io.StringIO()):
                return learned.main(list(args) + ["-tempora", BINARY])
        tmp = tempfile.mkdtemp(prefix="tempora-learned-smoke-")
        self.addCleanup(shutil.rmtree, tmp)
        out = os.path.join(tmp, "a")
        self.assertEqual(run("-scale", "smoke", "-out", out), 0)
        for name in ("networks", "detection", "cost", "time-windows", "windows-by-type", "reliance", "selection", "selection-paired"):
            for ext in (".md", ".csv"):
                self.assertTrue(os.path.getsize(os.path.join(out, name + ext)) > 0, name + ext)
        with open(os.path.join(out, "selection.md")) as f:
            table = f.read()
        for label in learned_labels():
            self.assertIn(label, table)
        with open(os.path.join(out, "runs", "p00-cnn.json")) as f:
            first = json.load(f)
        self.assertGreater(first["auroc"]["test"], 0.8, "the CNN learns the smoke problem")
        # TIME's tests are sequential (never past their caps, and the overall
        # family stops early on at least one feature); PERM's are fixed-P,
        # every cell drawing all of its 20 permutations.
        time_draws = {c["test"]: c for c in first["explanations"]["time"]["draws"]}
        self.assertIn("overall", time_draws)
        self.assertEqual(time_draws["overall"]["tests"], 4)
        for c in time_draws.values():
            self.assertLessEqual(c["draws"], c["max_draws"], c)
        self.assertLess(time_draws["overall"]["draws"], time_draws["overall"]["max_draws"])
        self.assertEqual(first["explanations"]["perm"]["draws"],
                         [{"test": "cell", "tests": 32, "draws": 32 * 20, "max_draws": 32 * 20}])
        self.assertEqual(first["settings"]["options"]["perm"], {"sequential": False, "permutations": 20})

        # A second run of one architecture, with two model processes, gives
        # the same record, apart from wall times.
        out2 = os.path.join(tmp, "b")
        self.assertEqual(run("-scale", "smoke", "-archs", "cnn", "-model-procs", "2", "-out", out2), 0)
        with open(os.path.join(out2, "runs", "p00-cnn.json")) as f:
            second = json.load(f)
        first.pop("timing")
        second.pop("timing")
        self.assertEqual(first, second)

        # A rerun into the same directory keeps the finished records.
        before = os.path.getmtime(os.path.join(out2, "runs", "p00-cnn.json"))
        self.assertEqual(run("-scale", "smoke", "-archs", "cnn", "-model-procs", "2", "-out", out2), 0)
        self.assertEqual(os.path.getmtime(os.path.join(out2, "runs", "p00-cnn.json")), before)


def learned_labels():
    import report
    return [report.SET_LABELS[s] for s in ("all", "time", "perm", "random")]


if __name__ == "__main__":
    unittest.main()
