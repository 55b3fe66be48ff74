"""tempora.gradients: integrated gradients and saliency with
torch.autograd, on synthetic problems' modules (SynthModel.torch).

Completeness (Σ attributions = f(x) − f(baseline)) is checked at three
strengths: exactly (1e-12) where the gradient is linear along the path
(the trapezoid and middle rules integrate it exactly, with one interval);
at the trapezoid rule's order 1/steps² on a smooth model; at order
1/steps across the kinks of a window maximum."""

import importlib.util
import os
import subprocess
import tempfile
import unittest

import numpy as np

import tempora
from _need import need

HAVE_TORCH = importlib.util.find_spec("torch") is not None
EXACT = 1e-12  # float64 rounding of a handful of sums


def additive(task, features, beta=0.0, threshold=0.0, missing=None):
    doc = {"format": "tempora-synth-model/1", "task": task, "num_features": len(features), "num_timesteps": 5,
           "beta": beta, "threshold": threshold,
           "features": [dict(f, index=j) for j, f in enumerate(features)]}
    if missing:
        doc["missing"] = missing
    return tempora.SynthModel.from_dict(doc)


def term(window, aggregator, nonlinearity, weights=None, mean=0.3, sd=1.5, coefficient=1.2, relevant=True):
    f = {"window": list(window), "aggregator": aggregator, "nonlinearity": nonlinearity, "mean": mean, "sd": sd,
         "coefficient": coefficient, "relevant": relevant}
    if weights is not None:
        f["weights"] = list(weights)
    return f


# A regression model whose gradient is linear along any straight path:
# weighted sums and averages under identity and square.
QUADRATIC = [term((0, 2), "random_weighted_sum", "square", weights=[0.5, -1.0, 2.0]),
             term((1, 4), "average", "identity", coefficient=-0.7),
             term((2, 3), "monotonic_weighted_sum", "identity", weights=[1.0, 2.0], relevant=False)]


@need(HAVE_TORCH, "torch")
class GradientsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.local = os.path.join(cls.tmp.name, "local")
        subprocess.run([tempora.find_binary(), "synth", "-out", cls.local, "-instances", "40", "-task",
                        "classification", "-aggregator", "max", "-noise", "auto", "-seed", "4"],
                       check=True, capture_output=True)
        cls.rng = np.random.default_rng(3)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exact_where_the_gradient_is_linear(self):
        net = additive("regression", QUADRATIC, beta=0.4).torch()
        x = self.rng.normal(size=(6, 3, 5))
        b = self.rng.normal(size=(3, 5))
        for rule in ("trapezoid", "middle"):
            for steps in (1, 3):
                a = tempora.gradients.integrated_gradients(net, x, b, steps=steps, rule=rule)
                gap = tempora.gradients.completeness_gap(net, x, a, b)
                self.assertLess(np.abs(gap).max(), EXACT, (rule, steps))
        # Left and right sums are not exact: the gradient changes along the
        # path (the squared term).
        a = tempora.gradients.integrated_gradients(net, x, b, steps=3, rule="left")
        self.assertGreater(np.abs(tempora.gradients.completeness_gap(net, x, a, b)).max(), 1e-6)
        # Attributions of a linear term are (x − b)·weight, cell by cell:
        # feature 1 (an average) has weight −0.7/1.5/4 on timesteps 1..4.
        a = tempora.gradients.integrated_gradients(net, x, b, steps=1)
        np.testing.assert_allclose(a[:, 1, 1:], (x - b)[:, 1, 1:] * (-0.7 / 1.5 / 4), rtol=0, atol=EXACT)
        self.assertTrue(np.all(a[:, 1, 0] == 0))

    def test_order_on_a_smooth_model(self):
        # sigmoid of the quadratic model: the trapezoid rule's error falls
        # as 1/steps² (a factor of 4 per doubling; at least 3 here).
        net = additive("classification", QUADRATIC, threshold=0.2).torch()
        x = self.rng.normal(size=(8, 3, 5))
        gaps = []
        for steps in (8, 16, 32):
            a = tempora.gradients.integrated_gradients(net, x, 0.0, steps=steps)
            gaps.append(np.abs(tempora.gradients.completeness_gap(net, x, a, 0.0)).max())
        self.assertGreater(gaps[0] / gaps[1], 3, gaps)
        self.assertGreater(gaps[1] / gaps[2], 3, gaps)

    def test_order_across_kinks(self):
        # Window maxima (tempora synth -aggregator max): the gradient jumps
        # where the maximum moves, so the error falls as 1/steps (a factor
        # of 4 over 32 → 128 steps on average; at least 2 here).
        p = tempora.Problem(self.local)
        net = p.torch_model()
        x, b = p.X[:20], p.X.mean(axis=0)
        means = []
        for steps in (32, 128):
            a = tempora.gradients.integrated_gradients(net, x, b, steps=steps)
            means.append(np.abs(tempora.gradients.completeness_gap(net, x, a, b)).mean())
        self.assertGreater(means[0] / means[1], 2, means)

    def test_missing_values(self):
        # A model over observed values: missing cells stay missing along
        # the path, are attributed 0, and completeness holds against the
        # baseline with x's cells missing.
        net = additive("regression", QUADRATIC, missing="observed").torch()
        x = self.rng.normal(size=(5, 3, 5))
        x[self.rng.random(x.shape) < 0.3] = np.nan
        a = tempora.gradients.integrated_gradients(net, x, 1.0, steps=2)
        self.assertTrue(np.all(a[np.isnan(x)] == 0))
        self.assertTrue(np.all(np.isfinite(a)))
        self.assertLess(np.abs(tempora.gradients.completeness_gap(net, x, a, 1.0)).max(), EXACT)
        s = tempora.gradients.saliency(net, x)
        self.assertTrue(np.all(s[np.isnan(x)] == 0) and np.all(np.isfinite(s)))

    def test_saliency(self):
        import torch

        net = additive("regression", QUADRATIC).torch()
        x = self.rng.normal(size=(4, 3, 5))
        xt = torch.as_tensor(x).requires_grad_(True)
        (g,) = torch.autograd.grad(net(xt).sum(), xt)
        np.testing.assert_array_equal(tempora.gradients.saliency(net, x, absolute=False), g.numpy())
        np.testing.assert_array_equal(tempora.gradients.saliency(net, x), np.abs(g.numpy()))
        # The average's cells: |−0.7/1.5/4| wherever the window reads.
        np.testing.assert_allclose(tempora.gradients.saliency(net, x)[:, 1, 1:], 0.7 / 1.5 / 4, rtol=1e-15)

    def test_several_outputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([tempora.find_binary(), "synth", "-out", tmp, "-instances", "20", "-features", "4",
                            "-outputs", "classes:3", "-seed", "2"], check=True, capture_output=True)
            p = tempora.Problem(tmp)
            net, x = p.torch_model(), p.X[:5]
            a = tempora.gradients.integrated_gradients(net, x, 0.0, steps=64)
            self.assertEqual(a.shape, (5, 3, 4, 20))
            one = tempora.gradients.integrated_gradients(net, x, 0.0, steps=64, output=2)
            np.testing.assert_allclose(one, a[:, 2], rtol=0, atol=1e-15)
            gap = tempora.gradients.completeness_gap(net, x, a, 0.0)
            self.assertEqual(gap.shape, (5, 3))
            self.assertLess(np.abs(gap).max(), 1e-3)
            self.assertEqual(tempora.gradients.saliency(net, x, output=0).shape, (5, 4, 20))
            with self.assertRaisesRegex(ValueError, "output=3: the model has 3 outputs"):
                tempora.gradients.saliency(net, x, output=3)

    def test_bad_arguments(self):
        net = additive("regression", QUADRATIC).torch()
        x = np.zeros((2, 3, 5))
        g = tempora.gradients
        with self.assertRaisesRegex(ValueError, "rule='simpson'"):
            g.integrated_gradients(net, x, rule="simpson")
        with self.assertRaisesRegex(ValueError, "steps=0"):
            g.integrated_gradients(net, x, steps=0)
        with self.assertRaisesRegex(ValueError, r"baseline of shape \(4,\)"):
            g.integrated_gradients(net, x, np.zeros(4))
        with self.assertRaisesRegex(ValueError, "baseline has missing values"):
            g.integrated_gradients(net, x, np.full((3, 5), np.nan))
        with self.assertRaisesRegex(ValueError, "output=1: the model has one output"):
            g.saliency(net, x, output=1)
        with self.assertRaisesRegex(ValueError, r"x of shape \(3, 5\)"):
            g.saliency(net, x[0])


if __name__ == "__main__":
    unittest.main()
