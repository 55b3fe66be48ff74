"""Per-instance attributions (issue 32, item 3): a local method's
explanation carries the attributions the program wrote (tempora explain
-attributions), in long form through to_dataframe("attributions"), and
drawn behind an instance's series with TIME's windows (plot_instance);
tempora.Attributions wraps any method's array the same way.
"""

import importlib.util
import os
import unittest

import numpy as np

import _models
import tempora

HAVE_PANDAS = importlib.util.find_spec("pandas") is not None
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
from _need import need  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def occlusion_by_hand(X):
    """OCC's attributions of _models.additive (zero baseline, windows of
    one cell): f(x) - f(x with the cell zero), which for this linear model
    is the cell's weight times its value."""
    a = np.zeros_like(X)
    a[:, 1, 4:] = 2.0 * X[:, 1, 4:] / 6
    a[:, 3, :3] = -1.5 * X[:, 3, :3] / 3
    return a


class LocalTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.X = _models.data(60, seed=3)
        cls.y = _models.additive(cls.X) + np.random.default_rng(4).normal(scale=0.1, size=60)

    def test_method_table(self):
        t = tempora.method_table()
        self.assertEqual([m.name for m in t.methods if m.local], ["LIME", "OCC", "TimeSHAP"])

    def test_occlusion(self):
        e = tempora.explain(_models.additive, self.X, self.y, task="regression", method="occ", progress=False)
        self.assertEqual(e.attributions.shape, (60, 6, 10))
        np.testing.assert_allclose(e.attributions, occlusion_by_hand(self.X), rtol=0, atol=1e-12)
        self.assertFalse(e.attributions.flags.writeable)
        self.assertIs(e.attributions, e.local.values)
        self.assertEqual(e.local.method, "OCC")
        np.testing.assert_array_equal(e.local.series, self.X)

    def test_first_instances(self):
        e = tempora.explain(_models.additive, self.X, self.y, task="regression", method="TimeSHAP",
                            instances_explained=4, coalitions=200, seed=2, progress=False)
        self.assertEqual(e.attributions.shape, (4, 6, 10))
        self.assertEqual(e.local.instances, [0, 1, 2, 3])
        self.assertTrue(np.all(np.abs(e.attributions).sum(axis=(1, 2)) > 0))

    def test_global_method(self):
        e = tempora.explain(_models.additive, self.X, self.y, task="regression", method="PERM", permutations=20,
                            progress=False)
        self.assertIsNone(e.attributions)
        self.assertIsNone(e.local)
        with self.assertRaisesRegex(ValueError, "PERM explanation has no per-instance attributions"):
            e.to_dataframe("attributions")
        with self.assertRaisesRegex(ValueError, "no per-instance attributions"):
            tempora.plot_instance(e, 0)

    def test_package_sets_the_file(self):
        with self.assertRaisesRegex(TypeError, "the package sets -attributions itself"):
            tempora.explain(_models.additive, self.X, self.y, task="regression", method="occ",
                            attributions="a.npy", progress=False)

    @need(HAVE_PANDAS, "pandas")
    def test_dataframe_ids(self):
        import pandas as pd
        m, d, l = 12, 6, 10
        X = self.X[:m]
        ids = ["p%02d" % i for i in range(m)]
        hours = [10 * t for t in range(l)]
        names = list("abcdef")
        long = pd.DataFrame({"instance": np.repeat(ids, d * l), "feature": np.tile(np.repeat(names, l), m),
                             "time": np.tile(hours, m * d), "value": X.reshape(-1)})
        e = tempora.explain(_models.additive, long, self.y[:m], task="regression", method="OCC", progress=False)
        df = e.to_dataframe("attributions")
        self.assertEqual(list(df.columns), ["instance", "feature", "timestep", "time", "attribution"])
        self.assertEqual(len(df), m * d * l)
        row = df[(df.instance == "p03") & (df.feature == "b") & (df.time == 50)]
        self.assertEqual(len(row), 1)
        self.assertEqual(row.attribution.iloc[0], e.attributions[3, 1, 5])
        self.assertAlmostEqual(row.attribution.iloc[0], 2.0 * X[3, 1, 5] / 6, places=12)
        self.assertEqual(e.local.position("p03"), 3)
        with self.assertRaisesRegex(KeyError, "instance 'p99' has no attributions"):
            e.local.position("p99")


class OutputsTest(unittest.TestCase):
    def test_several_outputs(self):
        X = _models.data(40, seed=5)
        Y = _models.horizons3(X)
        e = tempora.explain(_models.horizons3, X, Y, task="regression", outputs="horizons", method="occ",
                            output_names=["h+1", "h+2", "h+3"], progress=False)
        self.assertEqual(e.attributions.shape, (40, 3, 6, 10))
        # h+2 reads feature 1 over timesteps 4..6: 2 * mean of three cells.
        np.testing.assert_allclose(e.attributions[:, 1, 1, 4:7], 2 * X[:, 1, 4:7] / 3, rtol=0, atol=1e-12)
        self.assertEqual(e.local.outputs, ["h+1", "h+2", "h+3"])
        np.testing.assert_array_equal(e.local.of_instance(2, output="h+2"), e.attributions[2, 1])
        with self.assertRaisesRegex(ValueError, "pass output="):
            e.local.of_instance(2)
        one = tempora.explain(_models.horizons3, X, Y, task="regression", outputs="horizons", method="occ",
                              output_names=["h+1", "h+2", "h+3"], target="h+2", progress=False)
        self.assertEqual(one.attributions.shape, (40, 6, 10))
        np.testing.assert_array_equal(one.attributions, e.attributions[:, 1])
        if HAVE_PANDAS:
            df = e.to_dataframe("attributions")
            self.assertEqual(list(df.columns), ["instance", "output", "feature", "timestep", "attribution"])
            r = df[(df.instance == 2) & (df.output == "h+2") & (df.feature == "1") & (df.timestep == 5)]
            self.assertEqual(r.attribution.iloc[0], e.attributions[2, 1, 1, 5])
            self.assertEqual(set(one.to_dataframe("attributions").output), {"h+2"})


class WrapTest(unittest.TestCase):
    def test_wrap(self):
        X = _models.data(8, d=3, l=5, seed=1)
        a = tempora.Attributions(X[:4] * 2, X, method="mine")
        self.assertEqual(a.values.shape, (4, 3, 5))
        self.assertEqual(a.instances, [0, 1, 2, 3])
        np.testing.assert_array_equal(np.asarray(a), X[:4] * 2)
        np.testing.assert_array_equal(a.series, X[:4])
        # layout="nld": values in X's layout, held in tempora's.
        nld = tempora.Attributions(X.transpose(0, 2, 1), X.transpose(0, 2, 1), layout="nld")
        np.testing.assert_array_equal(nld.values, X)
        for bad, msg in [(X[:, :2], "do not fit X"), (X[:, :, :, None, None], "want \\(instances"),
                         (np.full((2, 3, 5), np.nan), "must be finite")]:
            with self.assertRaisesRegex(ValueError, msg):
                tempora.Attributions(bad, X)
        with self.assertRaisesRegex(ValueError, "outputs: 3 names for 2 outputs"):
            tempora.Attributions(np.zeros((2, 2, 3, 5)), X, outputs=["a", "b", "c"])
        bare = tempora.Attributions(np.ones((2, 3, 5)), feature_names=["u", "v", "w"])
        self.assertIsNone(bare.series)
        with self.assertRaisesRegex(ValueError, "carry no data to draw"):
            tempora.plot_instance(bare, 0)

    @need(HAVE_PANDAS, "pandas")
    def test_wrap_dataframe(self):
        X = _models.data(3, d=2, l=4, seed=1)
        a = tempora.Attributions(np.arange(2 * 2 * 4 * 2, dtype=float).reshape(2, 2, 2, 4), X, outputs=["lo", "hi"])
        df = a.to_dataframe()
        self.assertEqual(len(df), 2 * 2 * 2 * 4)
        self.assertEqual(list(df.attribution), list(range(32)))
        self.assertEqual(list(df.iloc[9][["instance", "output", "feature", "timestep"]]), [0, "hi", "0", 1])


@need(HAVE_MPL, "matplotlib")
class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import matplotlib
        matplotlib.use("Agg")
        cls.X = _models.data(200, seed=7)
        cls.y = _models.additive(cls.X) + np.random.default_rng(8).normal(scale=0.1, size=200)
        cls.occ = tempora.explain(_models.additive, cls.X, cls.y, task="regression", method="occ", progress=False)
        cls.time = tempora.explain(_models.additive, cls.X, cls.y, task="regression", seed=1, progress=False)

    def tearDown(self):
        import matplotlib.pyplot as plt
        plt.close("all")

    def test_panels_and_windows(self):
        axes = tempora.plot_instance(self.occ, 5, features=2, time=self.time)
        # The two features of largest |attribution| of the instance, the
        # line drawn over the coloured band, TIME's windows shaded.
        self.assertEqual([ax.get_ylabel() for ax in axes], ["1 *", "3 *"]
                         if np.abs(self.occ.attributions[5, 1]).sum() >= np.abs(self.occ.attributions[5, 3]).sum()
                         else ["3 *", "1 *"])
        for ax in axes:
            j = int(ax.get_ylabel().split()[0])
            band = ax.images[0].get_array()
            np.testing.assert_array_equal(np.asarray(band)[0], self.occ.attributions[5, j])
            np.testing.assert_array_equal(ax.lines[0].get_ydata(), self.X[5, j])
            spans = [p for p in ax.patches]
            windows = [w.window for w in self.time.feature(str(j)).windows]
            self.assertEqual(len(spans), len(windows))
            self.assertGreater(len(windows), 0)
        self.assertIn("TIME's windows", axes[0].get_title())
        # Explanation.plot_instance, by name, without TIME.
        axes = self.occ.plot_instance(5, features=["0", "3"])
        self.assertEqual([ax.get_ylabel() for ax in axes], ["0", "3"])
        self.assertEqual([len(ax.patches) for ax in axes], [0, 0])

    def test_default_panels(self):
        # Six features of eight by default, as docs/python.md says.
        X = _models.data(30, d=8, seed=9)
        occ = tempora.explain(_models.additive, X, _models.additive(X), task="regression", method="occ",
                              progress=False)
        axes = tempora.plot_instance(occ, 0)
        self.assertEqual(len(axes), 6)
        with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
            self.assertIn("the six of largest |attribution| by default", " ".join(f.read().split()))

    @need(HAVE_PANDAS, "pandas")
    def test_docs_example(self):
        """docs/python.md's example of per-instance attributions runs as
        printed after python/README.md's example, and its shape is what
        its comment says."""
        def block(path, start):
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                text = f.read()
            i = text.index("```python\n" + start) + len("```python\n")
            return text[i:text.index("```", i)]
        readme = block(os.path.join("python", "README.md"), "import numpy as np, tempora")
        example = block(os.path.join("docs", "python.md"), "occ = tempora.explain(")
        scope = {}
        exec(readme.replace('seed=1)', 'seed=1, progress=False)'), scope)
        exec(example.replace('method="occ")', 'method="occ", progress=False)'), scope)
        self.assertIn("occ.attributions.shape                              # (1000, 8, 10)", example)
        self.assertEqual(scope["occ"].attributions.shape, (1000, 8, 10))

    def test_mismatched_time(self):
        other = tempora.explain(_models.additive, self.X[:, :5], self.y, task="regression", method="occ",
                                progress=False)
        with self.assertRaisesRegex(ValueError, "pass the explanation of the same data"):
            tempora.plot_instance(self.occ, 0, time=other)
        with self.assertRaisesRegex(KeyError, "no feature named 'z'"):
            tempora.plot_instance(self.occ, 0, features=["z"])


if __name__ == "__main__":
    unittest.main()
