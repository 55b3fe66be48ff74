"""Models with several outputs (issue 30, decision 24 of docs/decisions.md):
the outputs a model returns and their targets as Python users have them,
what explain() hands the program, and the program's per-output results
read as they are (fields, DataFrames with an output column, the overview
and window plots, the notebook table).

The explanations read here are TIME's, made through the Go API by
testdata/outputs/main.go: a nested-dichotomy classifier of three classes,
a forecaster of three horizons and a sequence-to-sequence model that reads
one feature a step ahead. test_fixtures_are_current regenerates them.
"""

import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import numpy as np

import _models
import tempora
from tempora import _display_outputs, _input, _outputs, _protocol

HAVE_PANDAS = importlib.util.find_spec("pandas") is not None
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
HAVE_TORCH = importlib.util.find_spec("torch") is not None
from _need import CI, need  # noqa: E402
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TESTDATA = os.path.join(HERE, "testdata")
KINDS = ("classes", "horizons", "steps")


def fixture(kind):
    with open(os.path.join(TESTDATA, kind + ".json")) as f:
        return json.load(f)


class FixturesTest(unittest.TestCase):
    @unittest.skipIf(shutil.which("go") is None and not CI, "go is not on PATH")
    def test_fixtures_are_current(self):
        # The explanations the tests read are what TIME writes today.
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run(["go", "run", "./python/tests/testdata/outputs", tmp], cwd=ROOT, capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            for kind in KINDS:
                with open(os.path.join(tmp, kind + ".json")) as a, open(os.path.join(TESTDATA, kind + ".json")) as b:
                    self.assertEqual(a.read(), b.read(), "%s.json is stale: go run ./python/tests/testdata/outputs "
                                                         "python/tests/testdata" % kind)


class ResultsTest(unittest.TestCase):
    """The per-output results read from the program's JSON, field by field."""

    def test_fields(self):
        for kind in KINDS:
            doc = fixture(kind)
            e = tempora.Explanation(doc)
            outs = e.outputs
            self.assertIsInstance(outs, tempora.OutputResults)
            self.assertEqual(outs.kind, kind)
            self.assertEqual(outs.names, doc["outputs"]["names"])
            self.assertEqual(outs.anchors, doc["outputs"].get("anchors"))
            self.assertEqual((outs.causal_checked, outs.reads_future),
                             (doc["outputs"]["causal_checked"], doc["outputs"]["reads_future"]))
            self.assertEqual(len(outs), len(doc["outputs"]["per_output"]))
            self.assertIsNone(e.output)
            for k, (o, jo) in enumerate(zip(outs, doc["outputs"]["per_output"])):
                self.assertIs(outs[o.name], o)
                self.assertIs(outs[k], o)
                self.assertEqual(o.index, k)
                self.assertEqual(o.anchor, None if outs.anchors is None else outs.anchors[k])
                np.testing.assert_array_equal(o.cells, np.array(jo["cells"]))
                self.assertFalse(o.cells.flags.writeable)
                for f, jf in zip(o.features, jo["features"]):
                    self.assertEqual((f.name, f.important, f.tested, f.score),
                                     (jf["name"], jf["important"], jf["tested"], jf["score"]))
                    self.assertEqual(f.reads_future, jf.get("reads_future", False))
                    if jf.get("future_p_adjusted") is None:
                        self.assertTrue(np.isnan(f.future_p_adjusted))
                    else:
                        self.assertEqual(f.future_p_adjusted, jf["future_p_adjusted"])
                    for w, jw in zip(f.windows, jf.get("windows") or []):
                        self.assertEqual(w.window, tuple(jw["window"]))
                        self.assertEqual(w.lag, None if jw.get("lag") is None else tuple(jw["lag"]))
                self.assertEqual(o.important, [jf["name"] for jf in jo["features"] if jf["important"]])
            # The whole model's results are the explanation's own, as for
            # one output, with no causal check.
            self.assertEqual(e.important, [f["name"] for f in doc["features"] if f["important"]])
            self.assertTrue(all(not f.reads_future and f.lag is None for f in e.features))
        with self.assertRaisesRegex(KeyError, r"no output named 'h\+9' \(the outputs are h\+1, h\+2, h\+3\)"):
            tempora.Explanation(fixture("horizons")).outputs["h+9"]
        with self.assertRaisesRegex(IndexError, "output 3: the model has 3 outputs"):
            tempora.Explanation(fixture("horizons")).outputs[3]

    def test_what_the_fixtures_show(self):
        # The three models' truths, as TIME found them: these are the
        # cases the plots and tables must show.
        c = tempora.Explanation(fixture("classes")).outputs
        self.assertEqual([o.important for o in c], [["a"], ["a", "c"], ["a", "c"]])
        h = tempora.Explanation(fixture("horizons")).outputs
        self.assertEqual([o.important for o in h], [["a"], ["b"], ["a", "c"]])
        self.assertEqual(h["h+2"].feature("b").lag, (5, 7))  # window 4-6 from anchor 11
        s = tempora.Explanation(fixture("steps")).outputs
        self.assertTrue(s.causal_checked and s.reads_future)
        self.assertEqual([o.feature("c").reads_future for o in s], [True] * 9 + [False])
        self.assertEqual({o.feature("b").lag for o in s[2:]}, {(1, 2)})

    def test_one_output_of_several(self):
        # A method asked for one output (output=, or target=): the
        # explanation names it and holds that output's results.
        doc = fixture("classes")
        del doc["outputs"]
        doc["output"] = "dog"
        e = tempora.Explanation(doc)
        self.assertEqual((e.output, e.outputs), ("dog", None))
        self.assertIn("output dog", repr(e))
        self.assertEqual(tempora.Explanation(e.to_json()).output, "dog")


@need(HAVE_PANDAS, "pandas")
class FramesTest(unittest.TestCase):
    def test_features_frame(self):
        for kind in KINDS:
            e = tempora.Explanation(fixture(kind))
            df = e.to_dataframe()
            d, k = e.num_features, len(e.outputs)
            self.assertEqual(df.columns[0], "output")
            self.assertEqual(list(df["output"].cat.categories), [""] + e.outputs.names)  # "": the whole model
            self.assertEqual(len(df), d * (k + 1))
            whole = df[df["output"] == _display_outputs.WHOLE]
            one = tempora.Explanation({key: v for key, v in fixture(kind).items() if key != "outputs"}).to_dataframe()
            # The whole model's rows are the frame of one output.
            for c in one.columns:
                self.assertTrue(whole[c].equals(one[c]) or list(whole[c]) == list(one[c]), c)
            for o in e.outputs:
                rows = df[df["output"] == o.name]
                self.assertEqual(list(rows.index), [f.name for f in o.features])
                self.assertEqual(list(rows["important"]), [f.important for f in o.features])
                self.assertEqual(list(rows["tested"]), [f.tested for f in o.features])
            for c in _display_outputs.LAG_COLUMNS + ("lags",) + _display_outputs.FUTURE_COLUMNS:
                self.assertIn(c, df.columns)  # as in the program's CSV, for every kind
            if e.outputs.anchors is None:
                self.assertTrue(df["lag_start"].isna().all() and (df["lags"] == "").all())
            self.assertTrue(whole["lag_start"].isna().all() and not whole["reads_future"].any())
        e = tempora.Explanation(fixture("steps"))
        df = e.to_dataframe()
        row = df[(df["output"] == "3")].loc["b"]
        self.assertEqual((row["window_start"], row["window_end"], row["lag_start"], row["lag_end"]), (1, 2, 1, 2))
        self.assertEqual(row["lags"], "1-2*")
        row = df[(df["output"] == "0")].loc["c"]
        self.assertEqual((row["lags"], row["reads_future"]), ("-1--1*", True))
        self.assertEqual(row["future_p_adjusted"], e.outputs[0].feature("c").future_p_adjusted)
        cols = list(df.columns)
        self.assertEqual(cols[cols.index("window_end") + 1:cols.index("window_end") + 3], ["lag_start", "lag_end"])
        self.assertEqual(cols[cols.index("windows") + 1], "lags")

    def test_cells_frame(self):
        e = tempora.Explanation(fixture("horizons"))
        cells = e.to_dataframe("cells")
        self.assertEqual(cells.index.names, ["output", "feature", "timestep"])
        self.assertEqual(len(cells), (len(e.outputs) + 1) * e.num_features * e.num_timesteps)
        self.assertEqual(cells.loc[("h+2", "b", 5), "score"], e.outputs["h+2"].cells[1, 5])
        self.assertEqual(cells.loc[(_display_outputs.WHOLE, "c", 1), "score"], e.cells[2, 1])
        self.assertTrue(cells.loc[("h+2", "b", 5), "in_window"])
        self.assertFalse(cells.loc[("h+1", "b", 5), "in_window"])
        with self.assertRaisesRegex(ValueError, "kind must be"):
            e.to_dataframe("rows")


@need(HAVE_MPL, "matplotlib")
class PlotTest(unittest.TestCase):
    def setUp(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt = plt
        self.addCleanup(plt.close, "all")

    def test_overview(self):
        # One row per feature, the whole model then each output; "*" where
        # the feature is important to that output, "!" where the output
        # reads it after its own step.
        for kind in KINDS:
            e = tempora.Explanation(fixture(kind))
            axes = e.plot()
            over = axes[0]
            img = over.get_images()[0].get_array()
            for j, f in enumerate(e.features):
                self.assertEqual(img[j, 0], f.score)
                for c, o in enumerate(e.outputs):
                    of = o.features[j]
                    if of.tested:
                        self.assertEqual(img[j, c + 1], of.score)
                    else:
                        self.assertTrue(np.ma.is_masked(img[j, c + 1]) or np.isnan(img[j, c + 1]))
            marks = sorted((round(t.get_position()[1]), round(t.get_position()[0]), t.get_text()) for t in over.texts)
            want = sorted([(j, 0, "*") for j, f in enumerate(e.features) if f.important] +
                          [(j, c + 1, ("*" if o.features[j].important else "") + ("!" if o.features[j].reads_future else ""))
                           for c, o in enumerate(e.outputs) for j in range(e.num_features)
                           if o.features[j].important or o.features[j].reads_future])
            self.assertEqual(marks, want, kind)
            self.assertEqual([t.get_text() for t in over.get_xticklabels()][1:], e.outputs.names)

    def test_windows_per_output(self):
        from matplotlib.patches import Rectangle
        # A panel per feature with a window; a box per window of each
        # output, at the output's row, in lags where the output has an
        # anchor (the sequence's outputs) and in timesteps for classes.
        for kind in KINDS:
            e = tempora.Explanation(fixture(kind))
            axes = e.plot()[1:]
            feats = [j for j in range(e.num_features) if any(o.features[j].windows for o in e.outputs)]
            self.assertEqual([ax.get_title().rstrip(" *") for ax in axes], [e.features[j].name for j in feats])
            for ax, j in zip(axes, feats):
                got = sorted((round(p.get_y() + 0.4), p.get_x() + 0.5, p.get_x() + p.get_width() - 0.5)
                             for p in ax.patches if isinstance(p, Rectangle))
                want = sorted((c, float((w.lag if e.outputs.anchors is not None else w.window)[0]),
                               float((w.lag if e.outputs.anchors is not None else w.window)[1]))
                              for c, o in enumerate(e.outputs) for w in o.features[j].windows)
                self.assertEqual(got, want, (kind, j))
            if e.outputs.anchors is not None:
                self.assertIn("lag", axes[0].get_xlabel())
                lo, hi = axes[0].get_xlim()
                self.assertGreater(lo, hi)  # the past on the left
        steps = tempora.Explanation(fixture("steps"))
        c = steps.plot(view="windows")[2]
        self.assertEqual(c.get_title(), "c *")
        self.assertEqual(sum(t.get_text().strip() == "!" for t in c.texts), 9)

    def test_views_and_one_output(self):
        e = tempora.Explanation(fixture("horizons"))
        ax = e.plot(output="h+2")
        self.assertIn("output h+2", ax.get_title())
        np.testing.assert_array_equal(ax.get_images()[0].get_array(), e.outputs["h+2"].cells)
        self.assertEqual(sorted((p.get_x(), p.get_width()) for p in ax.patches), [(3.5, 3)])
        ax = e.plot(view="cells")
        np.testing.assert_array_equal(ax.get_images()[0].get_array(), e.cells)
        self.assertEqual(len(e.plot(features=2)[0].get_yticklabels()), 2)
        _, given = self.plt.subplots()
        self.assertIs(e.plot(ax=given), given)
        with self.assertRaisesRegex(ValueError, "view must be one of"):
            e.plot(view="lags")
        one = tempora.Explanation({key: v for key, v in fixture("horizons").items() if key != "outputs"})
        with self.assertRaisesRegex(ValueError, "view= applies to"):
            one.plot(view="outputs")
        with self.assertRaisesRegex(ValueError, "one output"):
            one.plot(output=0)


class HTMLTest(unittest.TestCase):
    def test_table(self):
        e = tempora.Explanation(fixture("steps"))
        h = e._repr_html_()
        self.assertIn("10 steps; important to the whole model: a, b, c", h)
        self.assertEqual(h.count("<table>"), 2)
        for name in e.outputs.names:
            self.assertIn("<th>%s</th>" % name, h)
        self.assertEqual(h.count("reads the future"), sum(o.feature("c").reads_future for o in e.outputs))
        self.assertIn("lag 1&ndash;2", h)
        self.assertIn("lag -1<br><b>reads the future", h)  # one step: one lag
        self.assertIn("some outputs read timesteps after their own", h)
        doc = fixture("horizons")
        doc["warnings"] = ["w1", "w2", "w1"]
        h = tempora.Explanation(doc)._repr_html_()
        self.assertEqual((h.count("warning: w1 (&times;2)</p>"), h.count("warning: w2</p>")), (1, 1))
        c = tempora.Explanation(fixture("classes"))._repr_html_()
        self.assertIn("6&ndash;9", c)
        self.assertNotIn("lag ", c)
        self.assertNotIn("causal check", c)


class Classifier3:
    """A scikit-learn-style classifier of three string classes, classes_
    in an order that is not the sorted one."""

    classes_ = np.array(["medium", "low", "high"])

    def predict_proba(self, x):
        s = x[:, 0, -3:].mean(1)
        p_low = 1 / (1 + np.exp(3 * s))
        p_high = 1 / (1 + np.exp(-3 * x[:, 2].mean(1))) * (1 - p_low)
        return np.stack([1 - p_low - p_high, p_low, p_high], axis=1)


class Binary:
    classes_ = np.array(["no", "yes"])

    def predict_proba(self, x):
        p = _models.logistic(x)
        return np.stack([1 - p, p], axis=1)


def data(m=6):
    return _input.as_data(_models.data(m))


class TargetsTest(unittest.TestCase):
    """What the outputs are, and their targets as the program reads them."""

    def test_classes_from_predict_proba(self):
        y = np.array(["low", "high", "medium", "low"])
        ya, spec = _outputs.targets(y, "classification", data(4), None, None, None, None, Classifier3())
        self.assertEqual((spec.kind, spec.k, spec.names, spec.labels), ("classes", 3, ["medium", "low", "high"],
                                                                         ["medium", "low", "high"]))
        np.testing.assert_array_equal(ya, [1, 2, 0, 1])  # positions in classes_, predict_proba's columns
        self.assertEqual(spec.flags(None), ["-outputs", "classes:3"])
        # A bound predict_proba carries its classes_ too.
        _, spec = _outputs.targets(y, "classification", data(4), None, None, None, None, Classifier3().predict_proba)
        self.assertEqual(spec.labels, ["medium", "low", "high"])
        with self.assertRaisesRegex(ValueError, r"y holds labels \['none'\] that are not among the classes"):
            _outputs.targets(np.array(["low", "none"]), "classification", data(2), None, None, None, None,
                             Classifier3())
        with self.assertRaisesRegex(ValueError, r"classes=\['low', 'medium', 'high'\] differ from the model's classes_"):
            _outputs.targets(y, "classification", data(4), ["low", "medium", "high"], None, None, None, Classifier3())

    def test_classes_from_labels(self):
        # Three labels and a function: classes, in sorted order (classes=
        # gives the model's column order).
        ya, spec = _outputs.targets(np.array([2, 0, 1, 1]), "classification", data(4), None, None, None, None,
                                    _models.logistic)
        self.assertEqual((spec.kind, spec.k, spec.names), ("classes", 3, ["0", "1", "2"]))
        np.testing.assert_array_equal(ya, [2, 0, 1, 1])
        ya, spec = _outputs.targets(["b", "c", "a"], "classification", data(3), ["c", "b", "a"], None, None, None,
                                    _models.logistic)
        np.testing.assert_array_equal(ya, [1, 0, 2])
        self.assertEqual(spec.names, ["c", "b", "a"])
        with self.assertRaisesRegex(ValueError, "outputs='classes' needs task='classification'"):
            _outputs.targets([0, 1, 2], "regression", data(3), None, "classes", None, None, _models.additive)

    def test_binary_and_regression_stay_one_output(self):
        for y, task, model in ((np.array(["no", "yes", "no"]), "classification", Binary()),
                               (np.array([0.0, 1.0, 1.0]), "classification", _models.logistic),
                               (np.array([0.5, 1.5, 2.5]), "regression", _models.additive),
                               (np.array([[0.5], [1.5], [2.5]]), "regression", _models.additive)):
            got, spec = _outputs.targets(y, task, data(3), None, None, None, None, model)
            self.assertIsNone(spec)
            self.assertIs(got, y)  # read by _input.as_targets as ever
        with self.assertRaisesRegex(ValueError, "needs 3 or more classes; the model's classes_ give 2"):
            _outputs.targets(["no", "yes"], "classification", data(2), None, "classes", None, None, Binary())

    def test_horizons_and_steps(self):
        y = np.arange(12.0).reshape(4, 3)
        y[1, 2] = np.nan
        ya, spec = _outputs.targets(y, "regression", data(4), None, "horizons", ["h+1", "h+2", "h+3"], None,
                                    _models.additive)
        np.testing.assert_array_equal(ya, y)
        self.assertEqual((spec.kind, spec.k, spec.names, spec.anchors), ("horizons", 3, ["h+1", "h+2", "h+3"], None))
        _, spec = _outputs.targets(y, "regression", data(4), None, "steps", None, [2, 4, 6], _models.additive)
        self.assertEqual(spec.flags(None), ["-outputs", "steps:3", "-output-anchors", "2,4,6"])
        with self.assertRaisesRegex(ValueError, r"^y has 3 columns, one per output: say what the outputs are, "
                                                r"outputs='horizons' .* or outputs='steps'"):
            _outputs.targets(y, "regression", data(4), None, None, None, None, _models.additive)
        with self.assertRaisesRegex(ValueError, r"outputs='classes' takes one class label per instance; y has 3 columns"):
            _outputs.targets(y, "classification", data(4), None, "classes", None, None, _models.additive)
        with self.assertRaisesRegex(ValueError, "output_names has 2 names for 3 outputs"):
            _outputs.targets(y, "regression", data(4), None, "horizons", ["a", "b"], None, _models.additive)
        with self.assertRaisesRegex(ValueError, "outputs must be 'classes', 'horizons' or 'steps'"):
            _outputs.targets(y, "regression", data(4), None, "horizon", None, None, _models.additive)
        with self.assertRaisesRegex(TypeError, "output_anchors must be ints"):
            _outputs.targets(y, "regression", data(4), None, "steps", None, [0, 1.5, 2], _models.additive)

    @need(HAVE_PANDAS, "pandas")
    def test_dataframes(self):
        import pandas as pd
        m, d, l = 4, 2, 5
        ids = ["p%d" % i for i in range(m)]
        X = pd.DataFrame([(i, t, float(t)) for i in ids for t in range(l)], columns=["instance", "time", "x"])
        X["x2"] = 1.0
        dx = _input.as_data(X)
        # Long targets: (instance, output, value), shuffled; a missing row
        # is no target; outputs that are times of X anchor the steps there.
        rows = [(i, t, 10.0 * n + t) for n, i in enumerate(ids) for t in (1, 3, 4) if (i, t) != ("p2", 3)]
        long = pd.DataFrame(rows, columns=["instance", "output", "value"]).sample(frac=1, random_state=1)
        ya, spec = _outputs.targets(long, "regression", dx, None, "steps", None, None, _models.additive)
        want = np.array([[10.0 * n + t for t in (1, 3, 4)] for n in range(m)])
        want[2, 1] = np.nan
        np.testing.assert_array_equal(ya, want)
        self.assertEqual((spec.names, spec.anchors), (["1", "3", "4"], [1, 3, 4]))
        _, spec = _outputs.targets(long, "regression", dx, None, "horizons", None, None, _models.additive)
        self.assertIsNone(spec.anchors)  # a forecast's anchors are the program's default
        # Wide: one column per output, rows by instance id in any order.
        wide = pd.DataFrame(want, index=ids, columns=["h1", "h2", "h3"]).iloc[::-1]
        ya, spec = _outputs.targets(wide, "regression", dx, None, "horizons", None, None, _models.additive)
        np.testing.assert_array_equal(ya, want)
        self.assertEqual(spec.names, ["h1", "h2", "h3"])
        with self.assertRaisesRegex(ValueError, r"y: the DataFrame has no row for the instances \['p0'\]"):
            _outputs.targets(wide.iloc[:-1], "regression", dx, None, "horizons", None, None, _models.additive)
        # A categorical output column keeps its categories' order.
        cat = long.assign(output=pd.Categorical(long["output"], categories=[4, 3, 1]))
        ya, spec = _outputs.targets(cat, "regression", dx, None, "horizons", None, None, _models.additive)
        self.assertEqual(spec.names, ["4", "3", "1"])
        np.testing.assert_array_equal(ya, want[:, ::-1])
        with self.assertRaisesRegex(ValueError, "more than one row for \\(instance, output\\) = \\('p0', 1\\)"):
            _outputs.targets(pd.concat([long, long.iloc[:1].assign(instance="p0", output=1)]), "regression", dx,
                             None, "steps", None, None, _models.additive)
        # With an array X the long frame's instances are positions.
        arr = _input.as_data(np.zeros((2, 1, 3)))
        pos = pd.DataFrame({"instance": [1, 0, 0], "output": ["a", "a", "b"], "value": [1.0, 2.0, 3.0]})
        ya, spec = _outputs.targets(pos, "regression", arr, None, "horizons", None, None, _models.additive)
        np.testing.assert_array_equal(ya, [[2.0, 3.0], [1.0, np.nan]])
        # One column of labels, and a Series: one output, in X's order.
        one = pd.DataFrame({"y": [0.0, 1.0, 2.0, 3.0]}, index=ids[::-1])
        got, spec = _outputs.targets(one, "regression", dx, None, None, None, None, _models.additive)
        self.assertIsNone(spec)
        np.testing.assert_array_equal(got, [3.0, 2.0, 1.0, 0.0])


class Torch3:
    pass


class AnswersTest(unittest.TestCase):
    """The model's answers in the shape the program reads: (m, K)."""

    def test_shapes(self):
        b = np.zeros((5, 3, 4))
        for out in (np.ones((5, 3)), np.ones((5, 3, 1)), [[1.0] * 3] * 5):
            self.assertEqual(_input.shaped(out, 5, 3).shape, (5, 3))
        self.assertEqual(_input.shaped(np.ones(5), 5, 1).shape, (5, 1))
        with self.assertRaisesRegex(ValueError, r"predict returned an array of shape \(5,\) for a batch of 5 instances; "
                                                r"the model has 3 outputs, want \(5, 3\) \(or \(5, 3, 1\)\)"):
            _input.shaped(np.ones(5), 5, 3)
        with self.assertRaisesRegex(ValueError, r"shape \(5, 3, 2\)"):
            _input.shaped(np.ones((5, 3, 2)), 5, 3)
        # predict_proba's K columns reach the program as they are.
        p = _input.as_predict(Classifier3(), "classification", "ndl", None, 3)
        np.testing.assert_array_equal(p(b), Classifier3().predict_proba(b))
        # A plain function of one output is still called as is.
        self.assertIs(_input.as_predict(_models.additive, "regression", "ndl", None, 0), _models.additive)
        f = _input.as_predict(lambda x: x[:, 0, :], "regression", "ndl", None, 4)
        self.assertEqual(f(b).shape, (5, 4))

    @need(HAVE_TORCH, "torch")
    def test_torch_outputs(self):
        import torch

        class Forecaster(torch.nn.Module):  # (m, D, L) -> (m, 6)
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 6)

            def forward(self, x):
                return self.lin(x[:, 0, :])

        class Seq2Seq(torch.nn.Module):  # batch-first (m, L, D) -> (m, L, 1)
            def __init__(self):
                super().__init__()
                self.gru = torch.nn.GRU(2, 4, batch_first=True)
                self.head = torch.nn.Linear(4, 1)

            def forward(self, x):
                h, _ = self.gru(x)
                return self.head(h)

        b = np.random.default_rng(0).normal(size=(5, 2, 8))
        net = Forecaster().eval()
        out = _input.as_predict(net, "regression", "ndl", None, 6)(b)
        with torch.no_grad():
            np.testing.assert_allclose(out, net(torch.tensor(b, dtype=torch.float32)).numpy())
        seq = Seq2Seq().eval()
        out = _input.as_predict(seq, "regression", "nld", None, 8)(b)
        self.assertEqual(out.shape, (5, 8))
        with torch.no_grad():
            want = seq(torch.tensor(b.transpose(0, 2, 1), dtype=torch.float32))[:, :, 0].numpy()
        np.testing.assert_allclose(out, want)


def fake_program(tmp):
    """A stand-in for the tempora program that writes a fixture as its
    explanation and records its command line, the targets and the output
    names it was given; its method table is the real program's, with the
    flags of outputs and the baselines' output parameter where the real one
    lacks them (the contract of issue 30)."""
    path = os.path.join(tmp, "tempora")
    with open(path, "w") as f:
        f.write("""#!%s
import json, os, shutil, subprocess, sys
real, rec = os.environ["FAKE_REAL"], os.environ["FAKE_RECORD"]
args = sys.argv[1:]
if args[:2] == ["methods", "-json"]:
    doc = json.loads(subprocess.run([real, "methods", "-json"], capture_output=True, check=True).stdout)
    have = {f["name"] for f in doc["flags"]}
    for n in ("outputs", "output-names", "output-anchors"):
        if n not in have:
            doc["flags"].append({"name": n, "kind": "string", "default": "", "doc": n})
    for m in doc["methods"]:
        ps = m.get("params") or []
        if m["name"] == "PERM" and all(p["name"] != "output" for p in ps):
            m["params"] = ps + [{"name": "output", "kind": "string", "default": "", "doc": "output"}]
    print(json.dumps(doc))
    sys.exit(0)
with open(os.path.join(rec, "args.json"), "w") as f:
    json.dump(args, f)
flag = lambda name: args[args.index(name) + 1]
shutil.copy(flag("-targets"), os.path.join(rec, "y.npy"))
if "-output-names" in args:
    shutil.copy(flag("-output-names"), os.path.join(rec, "names.json"))
shutil.copy(os.environ["FAKE_JSON"], flag("-json"))
""" % sys.executable)
    os.chmod(path, 0o755)
    return path


class CommandLineTest(unittest.TestCase):
    """What explain() hands the program for a model with several outputs
    (-outputs, -output-names, -output-anchors, the targets file, output=
    and target=), read back from a stand-in program."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.rec = os.path.join(tmp.name, "rec")
        os.mkdir(self.rec)
        self.exe = fake_program(tmp.name)
        env = {"FAKE_REAL": tempora.find_binary(), "FAKE_RECORD": self.rec}
        for key, value in env.items():
            old = os.environ.get(key)
            os.environ[key] = value
            self.addCleanup(lambda k=key, v=old: os.environ.pop(k) if v is None else os.environ.__setitem__(k, v))

    def run_fake(self, fixture_kind, *args, **kw):
        for name in os.listdir(self.rec):
            os.remove(os.path.join(self.rec, name))
        os.environ["FAKE_JSON"] = os.path.join(TESTDATA, fixture_kind + ".json")
        self.addCleanup(os.environ.pop, "FAKE_JSON", None)
        e = tempora.explain(*args, binary=self.exe, progress=False, **kw)
        with open(os.path.join(self.rec, "args.json")) as f:
            argv = json.load(f)
        names = None
        if os.path.exists(os.path.join(self.rec, "names.json")):
            with open(os.path.join(self.rec, "names.json")) as f:
                names = json.load(f)
        return e, argv, np.load(os.path.join(self.rec, "y.npy")), names

    def flag(self, argv, name):
        return argv[argv.index(name) + 1] if name in argv else None

    def test_classes(self):
        X = _models.data(6)
        y = np.array(["low", "high", "medium", "low", "high", "medium"])
        e, argv, ya, names = self.run_fake("classes", Classifier3(), X, y, task="classification")
        self.assertEqual(self.flag(argv, "-outputs"), "classes:3")
        self.assertEqual(names, ["medium", "low", "high"])
        np.testing.assert_array_equal(ya, [1, 2, 0, 1, 2, 0])
        self.assertIsNone(self.flag(argv, "-output-anchors"))
        self.assertEqual(e.outputs.kind, "classes")

    def test_horizons_with_target(self):
        X = _models.data(6)
        y = np.arange(18.0).reshape(6, 3)
        _, argv, ya, names = self.run_fake("horizons", _models.additive, X, y, task="regression", outputs="horizons",
                                           output_names=["h+1", "h+2", "h+3"], method="PERM", target=1)
        self.assertEqual(self.flag(argv, "-outputs"), "horizons:3")
        self.assertEqual(names, ["h+1", "h+2", "h+3"])
        np.testing.assert_array_equal(ya, y)
        self.assertIn("-output=h+2", argv)  # target=1 is the second output, by its name
        _, argv, _, _ = self.run_fake("horizons", _models.additive, X, y, task="regression", outputs="horizons",
                                      method="PERM", output="1")
        self.assertIn("-output=1", argv)
        _, argv, _, names = self.run_fake("steps", _models.additive, X, y, task="regression", outputs="steps",
                                          output_anchors=[3, 4, 5], method="PERM", target=2)
        self.assertEqual((self.flag(argv, "-outputs"), self.flag(argv, "-output-anchors"), names),
                         ("steps:3", "3,4,5", None))
        self.assertIn("-output=2", argv)
        with self.assertRaisesRegex(TypeError, "target is captum's name for output; pass one"):
            tempora.explain(_models.additive, X, y, task="regression", outputs="horizons", method="PERM", target=1,
                            output=1, binary=self.exe)
        with self.assertRaisesRegex(TypeError, r"target= chooses the one output a method explains, and TIME takes "
                                               r"none \(it explains every output\); the methods that do: .*PERM"):
            tempora.explain(_models.additive, X, y, task="regression", outputs="horizons", target=1, binary=self.exe)
        with self.assertRaisesRegex(ValueError, "output=3: the model has 3 outputs, 0 to 2"):
            tempora.explain(_models.additive, X, y, task="regression", outputs="horizons", method="PERM", target=3,
                            binary=self.exe)

    def test_one_output_unchanged(self):
        # Binary classification and regression hand the program exactly
        # what they did: no output flag, the targets as before.
        X, _ = _models.data(6), None
        y = np.array(["no", "yes", "no", "yes", "yes", "no"])
        _, argv, ya, _ = self.run_fake("horizons", Binary(), X, y, task="classification")
        self.assertFalse(any(a.startswith("-output") for a in argv))
        np.testing.assert_array_equal(ya, [0, 1, 0, 1, 1, 0])
        with self.assertRaisesRegex(ValueError, "output_names= and output_anchors= apply to a model with several"):
            tempora.explain(_models.additive, X, np.zeros(6), task="regression", output_names=["a"], binary=self.exe)


def outputs_program():
    """Whether the tempora program explains models with several outputs
    (its explain has -outputs)."""
    try:
        return tempora.method_table().flag("outputs") is not None
    except tempora.TemporaError:
        return False


@unittest.skipUnless(outputs_program(), "the tempora program has no -outputs (models with several outputs)")
class EndToEndTest(unittest.TestCase):
    """Models with several outputs explained by the program, their batches
    answered from this process."""

    @classmethod
    def setUpClass(cls):
        cls.X = _models.data(400, seed=5)
        rng = np.random.default_rng(6)
        cls.Y = _models.horizons3(cls.X) + rng.normal(scale=0.5, size=(400, 3))

    def test_horizons(self):
        for procs in (1, 2):
            with self.subTest(model_procs=procs):
                e = tempora.explain(_models.horizons3, self.X, self.Y, task="regression", outputs="horizons",
                                    output_names=["h+1", "h+2", "h+3"], feature_names=list("abcdef"), seed=1,
                                    model_procs=procs, progress=False)
                self.assertEqual((e.outputs.kind, e.outputs.names, e.outputs.anchors),
                                 ("horizons", ["h+1", "h+2", "h+3"], [10, 11, 12]))
                self.assertEqual(e.important, ["a", "b", "c"])
                self.assertEqual([o.important for o in e.outputs], [["a"], ["b"], ["a", "c"]])
                self.assertEqual([w.lag for w in e.outputs["h+2"].feature("b").windows if w.significant], [(5, 7)])
                if procs == 1:
                    first = e
                else:  # the same explanation, whatever process answers
                    self.assertEqual(e.to_dict()["outputs"], first.to_dict()["outputs"])

    def test_classes_from_predict_proba(self):
        rng = np.random.default_rng(8)
        p = Classifier3().predict_proba(self.X)
        y = np.array([rng.choice(Classifier3.classes_, p=q) for q in p])
        e = tempora.explain(Classifier3(), self.X, y, task="classification", seed=1, progress=False)
        self.assertEqual((e.outputs.kind, e.outputs.names), ("classes", ["medium", "low", "high"]))
        self.assertEqual(e.important, ["0", "2"])
        self.assertEqual(e.outputs["low"].important, ["0"])  # p_low reads feature 0 only

    def test_steps_in_the_batch_first_layout(self):
        # Output s reads feature 0 at s and feature 1 at s - 1: a model
        # of (m, L, D) batches answering (m, L, 1).
        def seq(x):
            out = 2 * x[:, :, 0].copy()
            out[:, 1:] += 2 * x[:, :-1, 1]
            return out[:, :, None]
        Xn = self.X[:, :3, :].transpose(0, 2, 1).copy()
        Y = seq(Xn)[:, :, 0] + np.random.default_rng(9).normal(scale=0.5, size=(400, 10))
        e = tempora.explain(seq, Xn, Y, task="regression", outputs="steps", layout="nld", seed=1, progress=False)
        self.assertEqual((e.outputs.kind, e.outputs.anchors), ("steps", list(range(10))))
        self.assertTrue(e.outputs.causal_checked and not e.outputs.reads_future)
        self.assertEqual(e.important, ["0", "1"])
        self.assertEqual({w.lag for o in e.outputs for w in o.feature("0").windows if w.significant}, {(0, 0)})
        self.assertEqual({w.lag for o in e.outputs[1:] for w in o.feature("1").windows if w.significant}, {(1, 1)})

    def test_one_output_with_target(self):
        e = tempora.explain(_models.horizons3, self.X, self.Y, task="regression", outputs="horizons",
                            output_names=["h+1", "h+2", "h+3"], method="PERM", target=1, seed=1, progress=False)
        self.assertEqual((e.output, e.outputs), ("h+2", None))
        # h+2 reads feature 1 over timesteps 4 to 6, and nothing else.
        self.assertEqual([j for j in range(6) if e.cells[j].any()], [1])
        self.assertEqual([t for t in range(10) if e.cells[1, t] > 0], [4, 5, 6])

    def test_wrong_answer_shape(self):
        with self.assertRaises(tempora.ModelError) as cm:
            tempora.explain(_models.additive, self.X, self.Y, task="regression", outputs="horizons", progress=False)
        self.assertIn("the model has 3 outputs, want", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
