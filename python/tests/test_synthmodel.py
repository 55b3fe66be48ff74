"""A synthetic problem's model as a NumPy function and a PyTorch module
(Problem.numpy_model, Problem.torch_model, SynthModel), read from
model.json: equal to the program's predictions (tempora serve -problem) on
every kind of model tempora synth and tempora problems write.

Equality is |ours − program's| ≤ TOL·(1 + |program's|), TOL = 1e-9: the
formulas are the same, only the order of additions within a window may
differ (the measured differences are below 1e-14)."""

import importlib.util
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import tempora
from _need import need

HAVE_TORCH = importlib.util.find_spec("torch") is not None
TOL = 1e-9

SMALL = ["-instances", "60", "-features", "6", "-timesteps", "10"]

# Every model kind tempora synth writes: (name, flags). The additive
# model under each aggregator and task, with noise weights (β > 0); the
# model over observed values of irregular worlds; the models of several
# outputs.
CASES = [("%s-%s" % (task, agg), SMALL + ["-task", task, "-aggregator", agg, "-noise", "auto", "-seed", str(s)])
         for s, (task, agg) in enumerate((t, a) for t in ("regression", "classification")
                                         for a in ("max", "average", "monotonic_weighted_sum", "random_weighted_sum"))]
CASES += [
    ("classification-drawn", SMALL + ["-task", "classification", "-noise", "0.5", "-seed", "11"]),
    ("irregular-start-max", SMALL + ["-task", "classification", "-aggregator", "max", "-missing-rate", "0.4",
                                     "-length-spread", "2", "-seed", "12"]),
    ("irregular-end-mnar", SMALL + ["-task", "regression", "-noise", "auto", "-missing-rate", "0.3",
                                    "-missing-mechanism", "mnar", "-alignment", "end", "-length-spread", "1.5",
                                    "-seed", "13"]),
    ("irregular-weighted", SMALL + ["-task", "regression", "-aggregator", "random_weighted_sum",
                                    "-missing-rate", "0.5", "-seed", "14"]),
    ("irregular-average", SMALL + ["-task", "classification", "-aggregator", "average", "-missing-rate", "0.5",
                                   "-seed", "15"]),
    ("outputs-classes", SMALL + ["-outputs", "classes:4", "-seed", "16"]),
    ("outputs-horizons", SMALL + ["-outputs", "horizons:3", "-seed", "17"]),
    ("outputs-horizon", SMALL + ["-outputs", "horizons:1", "-seed", "18"]),
    ("outputs-steps-carried", SMALL + ["-outputs", "steps", "-period", "3", "-seed", "19"]),
    ("outputs-steps-peek", SMALL + ["-outputs", "steps", "-peek", "-seed", "20"]),
]


def synth(directory, args):
    subprocess.run([tempora.find_binary(), "synth", "-out", directory] + list(args), check=True, capture_output=True)


def batches(p, rng):
    """The problem's data and perturbations of it: noise, ties (rounded
    values), and for a model over missing values more missing cells,
    whole windows missing included."""
    x = p.X
    out = [x, x + rng.normal(scale=0.5, size=x.shape), np.round(x * 2) / 2]
    if getattr(p, "config", {}).get("irregular"):
        y = x.copy()
        y[rng.random(x.shape) < 0.4] = np.nan
        y[: len(y) // 3, :, : x.shape[2] // 2] = np.nan  # leaves each instance's end observed
        out.append(y)
    if getattr(p, "info", {}).get("format", "").startswith("tempora-synth-outputs"):
        with open(os.path.join(p.path, "model.json")) as f:
            carried = json.load(f)["carried"]
        if carried:
            y = x.copy()
            y[:, carried, :] = np.where(rng.random((len(x), len(carried), x.shape[2])) < 0.6, np.nan,
                                        y[:, carried, :])
            out.append(y)
    return out


def assert_close(test, got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    test.assertEqual(got.shape, want.shape, what)
    err = np.abs(got - want) / (1 + np.abs(want))
    test.assertTrue(np.all(np.isfinite(got)), what)
    test.assertLessEqual(float(err.max()), TOL, what)


class SynthModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dirs = {}
        for name, args in CASES:
            cls.dirs[name] = os.path.join(cls.tmp.name, name)
            synth(cls.dirs[name], args)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_equal(self, p, torch_too):
        rng = np.random.default_rng(7)
        model = p.numpy_model()
        module = p.torch_model() if torch_too else None
        for k, x in enumerate(batches(p, rng)):
            want = p.predict(x)
            what = "%s, batch %d" % (p.path, k)
            assert_close(self, model(x), want, what + " (numpy)")
            if module is not None:
                import torch

                got = module(torch.as_tensor(x))
                self.assertEqual(got.dtype, torch.float64)
                assert_close(self, got.detach().numpy(), want, what + " (torch)")
        return model

    def test_numpy_equals_program(self):
        seen = set()
        for name, _ in CASES:
            with self.subTest(name), tempora.Problem(self.dirs[name]) as p:
                m = self.check_equal(p, torch_too=False)
                self.assertEqual(m.task, p.task)
                with open(os.path.join(p.path, "model.json")) as f:
                    seen.update(t["nonlinearity"] for t in json.load(f).get("features", []))
        # The cases cover every nonlinearity as well as every aggregator.
        self.assertEqual(seen, {"identity", "abs", "square"})

    @need(HAVE_TORCH, "torch")
    def test_torch_equals_program(self):
        for name, _ in CASES:
            with self.subTest(name), tempora.Problem(self.dirs[name]) as p:
                self.check_equal(p, torch_too=True)

    @need(HAVE_TORCH, "torch")
    def test_benchmark_problems(self):
        # The problems tempora.problems() serves: Table 1's world and the
        # local suite's (every feature a window maximum).
        with tempfile.TemporaryDirectory() as tmp:
            for suite in ("table1", "local"):
                with tempora.problems(suite, quick=True, models=1, dir=os.path.join(tmp, suite)) as probs:
                    for p in probs:
                        calls = p.calls
                        self.check_equal(p, torch_too=True)
                        # The model's own calls count; numpy_model's do not.
                        self.assertEqual(p.calls - calls, len(batches(p, np.random.default_rng(7))))

    @need(HAVE_TORCH, "torch")
    def test_gradient_is_the_derivative(self):
        # The module's gradient against central differences of the NumPy
        # function, where the model is smooth (averages and weighted sums
        # under every nonlinearity, away from abs's kink) and at a maximum
        # (a subgradient: the derivative when the maximum is unique).
        import torch

        for name in ("regression-average", "classification-monotonic_weighted_sum", "regression-max",
                     "irregular-weighted", "outputs-steps-carried"):
            with self.subTest(name):
                p = tempora.Problem(self.dirs[name])
                model, module = p.numpy_model(), p.torch_model()
                x = p.X[:5].copy()
                xt = torch.as_tensor(x).requires_grad_(True)
                out = module(xt)
                out = out if out.ndim == 1 else out[:, -1]
                (g,) = torch.autograd.grad(out.sum(), xt)
                g = g.numpy()
                h = 1e-6
                fd = np.zeros_like(x)
                for j in range(x.shape[1]):
                    for t in range(x.shape[2]):
                        if np.isnan(x[0, j, t]):
                            continue
                        up, down = x.copy(), x.copy()
                        up[:, j, t] += h
                        down[:, j, t] -= h
                        fu, fdn = model(up), model(down)
                        if fu.ndim == 2:
                            fu, fdn = fu[:, -1], fdn[:, -1]
                        fd[:, j, t] = (fu - fdn) / (2 * h)
                obs = ~np.isnan(x)
                self.assertTrue(np.all(g[~obs] == 0), "a missing cell has gradient 0")
                np.testing.assert_allclose(g[:, ~np.isnan(x[0])], fd[:, ~np.isnan(x[0])], rtol=1e-5, atol=1e-6,
                                           err_msg=name)
                self.assertGreater(np.abs(g).sum(), 0)

    def test_refusals(self):
        clf = tempora.Problem(self.dirs["classification-max"]).numpy_model()
        x = tempora.Problem(self.dirs["classification-max"]).X[:3].copy()
        with self.assertRaisesRegex(ValueError, r"batch of shape \(3, 6, 9\)"):
            clf(x[:, :, :9])
        x[0, 0, 0] = np.nan
        with self.assertRaisesRegex(ValueError, "complete world"):
            clf(x)
        steps = tempora.Problem(self.dirs["outputs-steps-peek"])
        y = steps.X[:2].copy()
        y[:, 0, :] = np.nan  # a feature read, not carried
        with self.assertRaisesRegex(ValueError, "does not carry forward"):
            steps.numpy_model()(y)
        with self.assertRaises(tempora.TemporaError):  # the program refuses it too
            steps.predict(y)
        steps.close()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.json")
            with open(path, "w") as f:
                json.dump({"format": "tempora-synth-model/9"}, f)
            with self.assertRaisesRegex(ValueError, "model format 'tempora-synth-model/9'"):
                tempora.SynthModel.read(tmp)
            with open(os.path.join(self.dirs["regression-max"], "model.json")) as f:
                doc = json.load(f)
            doc["features"][0]["window"] = [3, 99]
            with open(path, "w") as f:
                json.dump(doc, f)
            with self.assertRaisesRegex(ValueError, "malformed model: feature 0: window"):
                tempora.SynthModel.read(path)


if __name__ == "__main__":
    unittest.main()
