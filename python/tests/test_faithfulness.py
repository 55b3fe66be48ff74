"""tempora.faithfulness: deletion and insertion curves, comprehensiveness
and sufficiency, and a global explanation's claimed cells, checked against
hand computations on a linear model of 3 x 4 cells, standard errors against
their direct formula, the loss against the program's own (an explanation's
baseline loss), reproducibility with a seed, and clear errors."""

import math
import os
import types
import unittest

import numpy as np

import tempora

# A linear model of 3 features x 4 timesteps: f(x) = sum of W * x.
W = np.array([[1.0, 2, 0, 0],
              [0, 0, 3, 0],
              [0, 0, 0, -1]])
X0 = np.array([[1.0, 2, 0, 1], [0, 1, 2, 0], [1, 0, 0, 3]])
X1 = np.array([[2.0, 0, 1, 0], [1, 0, 1, 1], [0, 2, 1, 1]])
# The third instance makes every cell's mean over instances 0, so the mean
# replacement is 0 and a removed cell drops out of the sum.
X = np.stack([X0, X1, -(X0 + X1)])
F = np.array([8.0, 4.0, -12.0])  # f of the three instances, by hand
A = W * X  # exact attributions of a linear model from the baseline 0
FRACTIONS = [0, 0.25, 0.5, 1]  # 0, 3, 6 and 12 of the 12 cells


def f(x):
    return (x * W).sum((1, 2))


def f_nan(x):
    return np.nansum(x * W, (1, 2))


def sigmoid(v):
    return 1 / (1 + math.exp(-v))


def se(values):
    return np.std(values, ddof=1) / math.sqrt(len(values))


class HandTest(unittest.TestCase):
    """Every value by hand. The top cells by |A|: instance 0: 6 (cell (1,2)),
    4 (0,1), -3 (2,3), 1 (0,0); instance 1: 3 (1,2), 2 (0,0), -1 (2,3);
    instance 2: -9 (1,2), -4 (0,1), 4 (2,3), -3 (0,0); then zeros."""

    def test_regression_output(self):
        r = tempora.faithfulness(f, X, None, A, task="regression", fractions=FRACTIONS)
        self.assertEqual((r.measure, r.replacement, r.scope, r.draws, r.instances), ("prediction", "mean", "local", 1, 3))
        # deletion of the top 3: instance 0 loses 6 + 4 - 3 = 7 of its 8;
        # instance 1 all of its 4; instance 2 -9 - 4 + 4 = -9 of its -12.
        dele = np.array([[0, 7, 8, 8], [0, 4, 4, 4], [0, 9, 12, 12]], dtype=float)
        # insertion keeps the top m: |f(x) - f(top m)|.
        ins = np.array([[8, 1, 0, 0], [4, 0, 0, 0], [12, 3, 0, 0]], dtype=float)
        np.testing.assert_allclose(r.deletion.values, [0, 20 / 3, 8, 8], rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.insertion.values, [8, 4 / 3, 0, 0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.deletion.instance_values, dele, atol=1e-12)
        np.testing.assert_allclose(r.insertion.instance_values, ins, atol=1e-12)
        # trapezoids over 0, 0.25, 0.5, 1 per instance: 6.75, 3.5, 9.75
        areas = np.array([0.125 * 7 + 0.125 * 15 + 0.25 * 16, 0.125 * 4 + 0.125 * 8 + 0.25 * 8,
                          0.125 * 9 + 0.125 * 21 + 0.25 * 24])
        np.testing.assert_allclose(areas, [6.75, 3.5, 9.75])
        self.assertAlmostEqual(r.deletion.area, 20 / 3, places=12)
        self.assertAlmostEqual(r.deletion.area_se, se(areas), places=12)
        self.assertAlmostEqual(r.insertion.area, np.mean([0.125 * 9 + 0.125 * 1, 0.125 * 4, 0.125 * 15 + 0.125 * 3]),
                               places=12)
        for k in range(4):
            self.assertAlmostEqual(r.deletion.se[k], se(dele[:, k]), places=12)
            self.assertAlmostEqual(r.insertion.se[k], se(ins[:, k]), places=12)
        self.assertTrue(np.all(np.isnan(r.deletion.se_draws)))  # one draw
        self.assertEqual(r.comprehensiveness(0.25), (r.deletion.values[1], r.deletion.se[1]))
        self.assertEqual(r.sufficiency(0.5), (r.insertion.values[2], r.insertion.se[2]))
        self.assertAlmostEqual(r.reference, np.mean(F))  # the mean prediction
        self.assertEqual(r.model_calls, 1 + 2 * 4)
        with self.assertRaises(KeyError):
            r.comprehensiveness(0.3)

    def test_classification_predicted_class(self):
        # p = sigmoid(f / 4): instances 0 and 1 predict class 1, instance 2
        # class 0, whose probability 1 - p rises back to 1/2 as its cells go.
        def p(x):
            return 1 / (1 + np.exp(-f(x) / 4))
        r = tempora.faithfulness(p, X, None, A, task="classification", fractions=[0, 0.25])
        want = np.mean([sigmoid(2) - sigmoid(1 / 4), sigmoid(1) - sigmoid(0), (1 - sigmoid(-3)) - (1 - sigmoid(-3 / 4))])
        self.assertAlmostEqual(r.deletion.values[1], want, places=12)
        self.assertAlmostEqual(r.reference, np.mean([sigmoid(2), sigmoid(1), 1 - sigmoid(-3)]), places=12)
        # insertion from all removed (p = 1/2 for every instance)
        self.assertAlmostEqual(r.insertion.values[0], np.mean([sigmoid(2), sigmoid(1), 1 - sigmoid(-3)]) - 0.5,
                               places=12)

    def test_global_claimed_loss(self):
        y = F + np.array([1.0, -1.0, 0.5])
        claimed = np.zeros((3, 4), dtype=bool)
        claimed[1, 2] = True  # keep only cell (1, 2): f' = 6, 3, -9
        r = tempora.faithfulness(f, X, y, claimed, task="regression", fractions=[0, 1])
        self.assertEqual((r.scope, r.measure), ("global", "loss"))
        np.testing.assert_array_equal(r.claimed.cells, claimed)
        # (y - f')^2 - (y - f)^2: 9 - 1, 0 - 1, 6.25 - 0.25
        self.assertAlmostEqual(r.claimed.keep_only.value, 13 / 3, places=12)
        self.assertAlmostEqual(r.claimed.keep_only.se, se([8, -1, 6]), places=12)
        # removing it: f' = 2, 1, -3
        self.assertAlmostEqual(r.claimed.removed.value, np.mean([49 - 1, 4 - 1, 72.25 - 0.25]), places=12)
        self.assertAlmostEqual(r.reference, np.mean([1, 1, 0.25]), places=12)
        self.assertEqual(r.claimed.removed.se_draws != r.claimed.removed.se_draws, True)  # NaN: one draw
        df = r.to_dataframe()
        self.assertEqual(list(df.curve), ["deletion", "deletion", "insertion", "insertion", "deletion_area",
                                          "insertion_area", "keep_only", "removed"])
        self.assertAlmostEqual(float(df.fraction.iloc[-1]), 1 / 12)

    def test_global_grid_ranks_every_instance_alike(self):
        # One grid for every instance: |W| ranks (1,2), (0,1), then (0,0)
        # and (2,3) tied (the lower index first).
        y = F.copy()
        r = tempora.faithfulness(f, X, y, W, task="regression", fractions=[0, 0.25])
        # deleting (1,2), (0,1), (0,0) leaves f' = -x23 = -3, -1, 4, against
        # y = f (whose loss is 0)
        want = np.mean([(8 + 3) ** 2, (4 + 1) ** 2, (-12 - 4) ** 2])
        self.assertAlmostEqual(r.deletion.values[1], want, places=10)
        np.testing.assert_array_equal(r.claimed.cells, W != 0)

    def test_missing_cells_stay_missing_and_are_not_counted(self):
        Xm = X.copy()
        Xm[0, 0, 2] = np.nan  # a zero cell of instance 0: 11 observed cells
        seen = []

        def model(x):
            seen.append(x.copy())
            return f_nan(x)

        r = tempora.faithfulness(model, Xm, None, A, task="regression", replacement="missing",
                                 fractions=[0, 0.25, 0.5])
        for x in seen:
            self.assertTrue(np.isnan(x[0, 0, 2]))
        # seen: unchanged, then (deletion, insertion) per fraction. At 0.25
        # instance 0 removes ceil(0.25 * 11) = 3 cells, the others 3 of 12.
        dele25 = seen[3]
        self.assertEqual([int(np.isnan(dele25[i]).sum()) for i in range(3)], [1 + 3, 3, 3])
        # at 0.5: ceil(5.5) = 6 cells of instance 0, 6 of the others; the
        # insertion keeps them and makes the other 5 (6) missing.
        ins50 = seen[6]
        self.assertEqual([int(np.isnan(ins50[i]).sum()) for i in range(3)], [1 + 5, 6, 6])
        np.testing.assert_allclose(r.deletion.instance_values[:, 1], [7, 4, 9])
        # the smallest count reaching the fraction: 0.2 of 12 cells is 3
        # (2.4 rounded up), 0.35 of 11 is 4 (3.85) and of 12 is 5 (4.2)
        seen.clear()
        tempora.faithfulness(model, Xm, None, A, task="regression", replacement="missing", fractions=[0.2, 0.35])
        self.assertEqual([int(np.isnan(seen[1][i]).sum()) for i in range(3)], [1 + 3, 3, 3])
        self.assertEqual([int(np.isnan(seen[3][i]).sum()) for i in range(3)], [1 + 4, 5, 5])
        # a missing cell is not replaced by the mean either
        seen.clear()
        tempora.faithfulness(model, Xm, None, A, task="regression", fractions=[0, 0.5, 1])
        self.assertEqual(len(seen), 7)
        for x in seen:
            self.assertTrue(np.isnan(x[0, 0, 2]))
            self.assertEqual(int(np.isnan(x).sum()), 1)

    def test_ties_in_index_order(self):
        # Equal attributions are taken feature-major in index order: the top
        # quarter of 3 x 8 cells is feature 0's timesteps 0 to 5.
        seen = []

        def model(x):
            seen.append(x.copy())
            return np.nansum(x, (1, 2))
        Xt = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8) + 1
        tempora.faithfulness(model, Xt, None, np.ones_like(Xt), task="regression", replacement="missing",
                             fractions=[0.25])
        want = np.zeros((3, 8), dtype=bool)
        want[0, :6] = True
        for i in range(2):
            np.testing.assert_array_equal(np.isnan(seen[1][i]), want)

    def test_permutation_draws(self):
        rng = np.random.default_rng(5)
        Xr = rng.normal(size=(30, 3, 4))
        Ar = W * Xr
        r = tempora.faithfulness(f, Xr, None, Ar, task="regression", replacement="permutation", draws=4, seed=7,
                                 fractions=[0, 0.5, 1])
        self.assertEqual(r.draws, 4)
        self.assertEqual(r.deletion.draw_values.shape, (4, 3))
        self.assertEqual(r.deletion.instance_values.shape, (30, 3))
        for c in (r.deletion, r.insertion):
            np.testing.assert_allclose(c.values, c.instance_values.mean(0), rtol=1e-12)
            np.testing.assert_allclose(c.values, c.draw_values.mean(0), rtol=1e-12)
            np.testing.assert_allclose(c.se, c.instance_values.std(0, ddof=1) / math.sqrt(30), rtol=1e-12)
            np.testing.assert_allclose(c.se_draws, c.draw_values.std(0, ddof=1) / 2, rtol=1e-12)
        same = tempora.faithfulness(f, Xr, None, Ar, task="regression", replacement="permutation", draws=4, seed=7,
                                    fractions=[0, 0.5, 1])
        np.testing.assert_array_equal(same.deletion.instance_values, r.deletion.instance_values)
        np.testing.assert_array_equal(same.insertion.draw_values, r.insertion.draw_values)
        other = tempora.faithfulness(f, Xr, None, Ar, task="regression", replacement="permutation", draws=4, seed=8,
                                     fractions=[0, 0.5, 1])
        self.assertFalse(np.array_equal(other.deletion.instance_values, r.deletion.instance_values))

    def test_permutation_donor_is_another_instance(self):
        # Removing every cell gives the donor's prediction: |f(x) - f(donor)|
        # is one of the differences to the other instances, never 0.
        for seed in range(10):
            r = tempora.faithfulness(f, X, None, A, task="regression", replacement="permutation", draws=1, seed=seed,
                                     fractions=[1])
            got = r.deletion.instance_values[:, 0]
            for i in range(3):
                self.assertIn(round(got[i], 9), {round(abs(F[i] - F[j]), 9) for j in range(3) if j != i})

    def test_forms_agree(self):
        base = tempora.faithfulness(f, X, None, A, task="regression", fractions=FRACTIONS)
        obj = tempora.faithfulness(f, X, None, types.SimpleNamespace(attributions=A), task="regression",
                                   fractions=FRACTIONS)
        nld = tempora.faithfulness(lambda x: f(x.transpose(0, 2, 1)), X.transpose(0, 2, 1), None,
                                   A.transpose(0, 2, 1), task="regression", fractions=FRACTIONS, layout="nld")
        for r in (obj, nld):
            np.testing.assert_array_equal(r.deletion.instance_values, base.deletion.instance_values)
            np.testing.assert_array_equal(r.insertion.instance_values, base.insertion.instance_values)
        # attributions of the first two instances score those two
        two = tempora.faithfulness(f, X, None, A[:2], task="regression", fractions=FRACTIONS)
        self.assertEqual(two.instances, 2)
        np.testing.assert_array_equal(two.deletion.instance_values, base.deletion.instance_values[:2])
        # batches of at most 2 instances give the same numbers
        small = tempora.faithfulness(f, X, None, A, task="regression", fractions=FRACTIONS, max_batch=2)
        np.testing.assert_array_equal(small.deletion.instance_values, base.deletion.instance_values)
        self.assertEqual(small.model_calls, 2 * base.model_calls)

    def test_torch_module(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch is not installed")
        net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 1, bias=False), torch.nn.Sigmoid())
        with torch.no_grad():
            net[1].weight.copy_(torch.tensor(W.reshape(1, 12) / 4))
        net.eval()
        r = tempora.faithfulness(net, X, None, A, task="classification", fractions=[0, 0.25])
        want = np.mean([sigmoid(2) - sigmoid(1 / 4), sigmoid(1) - sigmoid(0), (1 - sigmoid(-3)) - (1 - sigmoid(-3 / 4))])
        self.assertAlmostEqual(r.deletion.values[1], want, places=6)  # float32


class ErrorTest(unittest.TestCase):
    def check(self, exc, text, *args, **kw):
        kw.setdefault("task", "regression")
        with self.assertRaises(exc) as cm:
            tempora.faithfulness(*args, **kw)
        self.assertIn(text, str(cm.exception))

    def test_errors(self):
        self.check(ValueError, "attributions must have shape (instances, features, timesteps)", f, X, None,
                   A[:, :, :3])
        self.check(ValueError, "at most 3 instances", f, X, None, np.concatenate([A, A]))
        self.check(ValueError, "the shape of one instance, (3, 4)", f, X, None, W.T)
        self.check(ValueError, "one output", f, X, None, A[:, None])
        bad = A.copy()
        bad[1, 2, 3] = np.nan
        self.check(ValueError, "attributions hold NaN at index (1, 2, 3)", f, X, None, bad)
        self.check(ValueError, "measure='loss' needs one target", f, X, None, A, measure="loss")
        self.check(ValueError, "the target of instance 1 is nan", f, X, [1.0, np.nan, 2.0], A, measure="loss")
        Xi = X.copy()
        Xi[2, 0, 0] = np.inf
        self.check(ValueError, "X holds an infinite value at index (2, 0, 0)", f, Xi, None, A)
        Xe = X.copy()
        Xe[1] = np.nan
        self.check(ValueError, "instance 1 has no observed value", f, Xe, None, A)
        self.check(ValueError, "fractions must be increasing", f, X, None, A, fractions=[0.5, 0.2])
        self.check(ValueError, "fractions must be increasing", f, X, None, A, fractions=[0, 1.5])
        self.check(ValueError, "replacement must be one of", f, X, None, A, replacement="zero")
        self.check(ValueError, "measure must be one of", f, X, None, A, measure="logit")
        self.check(ValueError, "draws applies to 'permutation'", f, X, None, A, draws=3)
        self.check(ValueError, "task must be", f, X, None, A, task=None)
        self.check(ValueError, "at least two instances", f, X[:1], None, A[:1], replacement="permutation")
        self.check(tempora.ModelError, "want (3,)", lambda x: np.zeros((len(x), 2)), X, None, A)
        self.check(tempora.ModelError, "wants probabilities in [0, 1]", f, X, None, A, task="classification")
        self.check(tempora.ModelError, "replacement='mean' or 'permutation'", f, X, None, A, replacement="missing")

        def boom(x):
            raise RuntimeError("no")
        self.check(tempora.ModelError, "predict failed on the unchanged data (3 instances): RuntimeError: no", boom, X,
                   None, A)

    def test_nan_attributions_at_missing_cells_are_fine(self):
        Xm = X.copy()
        Xm[0, 0, 2] = np.nan
        Am = A.copy()
        Am[0, 0, 2] = np.nan
        r = tempora.faithfulness(f_nan, Xm, None, Am, task="regression", fractions=FRACTIONS)
        self.assertEqual(r.instances, 3)


class ProgramLossTest(unittest.TestCase):
    """The loss measure is the program's loss: faithfulness's reference
    under measure="loss" equals a TIME explanation's baseline loss of the
    same model and data; and a TIME explanation is a global explanation
    whose claimed cells are its cells."""

    def test_loss_and_time_explanation(self):
        rng = np.random.default_rng(3)
        Xr = rng.normal(size=(200, 3, 4))

        def g(x):  # certain (probability 1) where feature 1 starts above 2
            return np.where(x[:, 1, 0] > 2, 1.0, 1 / (1 + np.exp(-(2 * x[:, 0, 2:].sum(1) - x[:, 2, 0]))))
        yc = (rng.random(200) < g(Xr)).astype(float)
        sure = np.flatnonzero(Xr[:, 1, 0] > 2)
        self.assertGreater(len(sure), 0)
        yc[sure] = 0.0  # certain and wrong: the loss's clip of probabilities decides these
        yr = 2 * Xr[:, 0, 2:].sum(1) - Xr[:, 2, 0] + rng.normal(scale=0.3, size=200)
        for task, model, y in (("classification", g, yc),
                               ("regression", lambda x: 2 * x[:, 0, 2:].sum(1) - x[:, 2, 0], yr)):
            e = tempora.explain(model, Xr, y, task=task, seed=1, progress=False)
            r = tempora.faithfulness(model, Xr, y, e, task=task, fractions=[0, 1])
            self.assertEqual((r.scope, r.measure), ("global", "loss"))
            self.assertAlmostEqual(r.reference, e.diagnostics.baseline_loss, places=12, msg=task)
            claimed = np.abs(np.asarray(e.cells)) >= 1e-10
            for feat in e.features:
                if feat.important and not claimed[feat.index].any():
                    claimed[feat.index] = True
            np.testing.assert_array_equal(r.claimed.cells, claimed)
            self.assertTrue(claimed[0, 2:].all(), task)  # TIME finds the window of feature 0
            # keeping only what TIME claims costs far less than removing it
            self.assertLess(r.claimed.keep_only.value, r.claimed.removed.value, task)


class DocsTest(unittest.TestCase):
    """The numbers docs/python.md and docs/decisions.md state are the
    module's."""

    def test_stated_numbers(self):
        from tempora import _faithfulness as m
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

        def read(name):
            with open(os.path.join(root, "docs", name), encoding="utf-8") as fh:
                return " ".join(fh.read().split())
        python_md, decisions = read("python.md"), read("decisions.md")
        step = m.DEFAULT_FRACTIONS[1]
        np.testing.assert_allclose(m.DEFAULT_FRACTIONS, np.arange(len(m.DEFAULT_FRACTIONS)) * step, atol=1e-15)
        self.assertEqual(m.DEFAULT_FRACTIONS[-1], 1.0)
        self.assertIn("(default 0, %g, …, 1)" % step, python_md)
        self.assertIn("`draws=%d` draws" % m.DEFAULT_DRAWS, python_md)

        def power(v):
            k = round(-math.log10(v))
            self.assertEqual(v, 10.0 ** -k)
            return "10⁻" + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(k))
        self.assertIn("clipped at %s, as `loss.go`" % power(m.PROB_CLIP), decisions)
        self.assertIn("(|v| ≥ %s, the benchmark's rule)" % power(m.NEAR_ZERO), decisions)
        self.assertIn("(to %s, so that 0.35·10 is 4)" % power(m._COUNT_SLACK), decisions)


if __name__ == "__main__":
    unittest.main()
