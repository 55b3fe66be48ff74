"""The front door: data in the forms Python users have it (NumPy layouts,
pandas wide and long, string labels, scikit-learn-, PyTorch- and
Keras-style models), results out as DataFrames, plots and HTML, and
scikit-learn spellings answered with the tempora equivalent."""

import importlib.util
import json
import os
import unittest

import numpy as np

import _models
import tempora
from tempora import _help, _input

HAVE_PANDAS = importlib.util.find_spec("pandas") is not None
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
HAVE_TORCH = importlib.util.find_spec("torch") is not None
from _need import need  # noqa: E402
HERE = os.path.dirname(os.path.abspath(__file__))


class Classifier:
    """A scikit-learn-style classifier with string classes: predict_proba
    gives the columns of classes_ ("no", "yes")."""

    classes_ = np.array(["no", "yes"])

    def predict_proba(self, x):
        p = _models.logistic(x)
        return np.stack([1 - p, p], axis=1)


class KerasLike:
    """A Keras-style model: predict(x, verbose=0) on (m, L, D) batches,
    answering (m, 1)."""

    def predict(self, x, verbose=1):
        assert verbose == 0
        return _models.logistic(x.transpose(0, 2, 1)).reshape(-1, 1)


KerasLike.__module__ = "keras.engine"


def labelled(m=400, seed=2):
    X = _models.data(m, seed=seed)
    rng = np.random.default_rng(seed + 1)
    y01 = rng.random(m) < _models.logistic(X)
    return X, y01, np.where(y01, "yes", "no")


def fast(**kw):
    kw.setdefault("seed", 3)
    kw.setdefault("progress", False)
    return kw


class InputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.X, cls.y01, cls.ylab = labelled()
        cls.ref = tempora.explain(_models.logistic, cls.X, cls.y01.astype(float), task="classification", **fast())

    def same(self, e, rtol=0.0):
        """The reference explanation (up to the names); rtol allows for a
        model that computes in another library (the permutations and tests
        are the same, only the loss differs in the last bits)."""
        self.assertEqual([f.index for f in e.features if f.important],
                         [f.index for f in self.ref.features if f.important])
        np.testing.assert_allclose(e.cells, self.ref.cells, rtol=rtol, atol=0)

    def test_string_labels_and_predict_proba(self):
        # Sorted labels: "no" < "yes", so "yes" is the positive class, the
        # column of classes_ that predict_proba gives it.
        self.same(tempora.explain(Classifier(), self.X, self.ylab, task="classification", **fast()))
        self.same(tempora.explain(Classifier().predict_proba, self.X, list(self.ylab), task="classification", **fast()))
        ya, labels = _input.as_targets(np.array(["b", "a", "b"]), "classification", 3, None)
        self.assertEqual(labels, ("a", "b"))
        np.testing.assert_array_equal(ya, [1, 0, 1])
        ya, labels = _input.as_targets(np.array(["b", "a", "b"]), "classification", 3, None, classes=("b", "a"))
        np.testing.assert_array_equal(ya, [0, 1, 0])
        with self.assertRaisesRegex(ValueError, r"^y: task='classification' is binary: .*3: \['a', 'b', 'c'\]"):
            _input.as_targets(np.array(["a", "b", "c"]), "classification", 3, None)
        with self.assertRaisesRegex(ValueError, r"^y: task='regression' needs numbers"):
            _input.as_targets(np.array(["a", "b", "c"]), "regression", 3, None)

    def test_layout_nld_and_keras_style(self):
        Xt = self.X.transpose(0, 2, 1).copy()
        self.same(tempora.explain(KerasLike(), Xt, self.y01, task="classification", layout="nld", **fast()))

    def test_layout_is_never_guessed(self):
        X = np.zeros((5, 4, 6))
        with self.assertRaises(tempora.DataError) as cm:  # the program counts; the package knows the layouts
            tempora.as_array(X, layout="ndl", feature_names=list("abcdef"))
        e = cm.exception
        self.assertEqual((e.kind, e.argument, e.count, e.feature), ("feature-names", "feature_names", 6, None))
        self.assertIn("pass layout='nld'", str(e))
        with self.assertRaisesRegex(ValueError, r"^layout must be 'ndl'"):
            _input.as_data(X, "dnl")
        sq = np.arange(2 * 3 * 3, dtype=float).reshape(2, 3, 3)  # ambiguous: taken as ndl
        np.testing.assert_array_equal(_input.as_data(sq).X, sq)
        np.testing.assert_array_equal(_input.as_data(sq, "nld").X, sq.transpose(0, 2, 1))
        bad = np.zeros((2, 3, 4))
        bad[1, 2, 3] = np.inf  # NaN is a missing value (test_irregular.py); infinity is an error
        with self.assertRaises(ValueError) as cm:
            tempora.as_array(bad)
        e = cm.exception
        self.assertIsInstance(e, tempora.DataError)
        self.assertEqual((e.kind, e.argument, e.index, e.count, e.value), ("infinite", "X", (1, 2, 3), 1, np.inf))

    def test_model_kinds_and_errors(self):
        with self.assertRaisesRegex(TypeError, "^predict must be"):
            _input.as_predict(object(), "regression", "ndl", None)
        with self.assertRaisesRegex(TypeError, r"random_state.*seed="):
            tempora.explain(_models.additive, self.X, self.y01, task="regression", random_state=1)
        for kw, want in (("n_jobs", "workers="), ("n_repeats", "permutations="), ("scoring", "task=")):
            with self.subTest(kw=kw), self.assertRaisesRegex(TypeError, "scikit-learn keyword %r; .*%s" % (kw, want)):
                tempora.explain(_models.additive, self.X, self.y01, task="regression", **{kw: 1})

    @need(HAVE_TORCH, "torch")
    def test_torch_module(self):
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                return torch.sigmoid(3.0 * x[:, 0, -3:].mean(1) + 2.0 * x[:, 2, :].mean(1))

        net = Net().double()
        with self.assertWarnsRegex(RuntimeWarning, r"training mode.*model\.eval\(\)"):
            _input.as_predict(net, "classification", "ndl", None)
        net.eval()
        e = tempora.explain(net, torch.from_numpy(self.X), torch.from_numpy(self.y01.astype(float)),
                            task="classification", **fast())
        self.same(e, rtol=1e-6)

    @need(HAVE_PANDAS, "pandas")
    def test_dataframes(self):
        import pandas as pd
        m, d, l = self.X.shape
        names = ["f%d" % j for j in range(d)]
        ids = ["id%03d" % i for i in range(m)]  # sorted as the rows of X
        idx = pd.MultiIndex.from_product([ids, range(l)], names=["instance", "time"])
        wide = pd.DataFrame(self.X.transpose(0, 2, 1).reshape(m * l, d), index=idx, columns=names)
        y = pd.Series(self.ylab, index=ids)
        e = tempora.explain(Classifier(), wide, y, task="classification", **fast())
        self.same(e)
        self.assertEqual([f.name for f in e.features], names)
        # Long, shuffled, with the columns in another order: the same.
        long = wide.stack().rename("value").reset_index().rename(columns={"level_2": "feature"})
        long = long.sample(frac=1, random_state=0)[["value", "feature", "time", "instance"]]
        data = _input.as_data(long)
        np.testing.assert_array_equal(data.X, self.X)
        self.assertEqual(data.names, names)
        # One column per feature, columns reordered: the features are
        # sorted as a long frame's (a warning says so); feature_names=
        # states the column order.
        cols = wide.reset_index()[["instance", "time"] + names[::-1]]
        with self.assertWarnsRegex(UserWarning, r"in the sorted order of their names, wide or long"):
            data = _input.as_data(cols)
        self.assertEqual(data.names, names)
        np.testing.assert_array_equal(data.X, self.X)
        data = _input.as_data(cols, feature_names=names[::-1])
        np.testing.assert_array_equal(data.X, self.X[:, ::-1])
        # A Series y is aligned by instance, whatever its order.
        ya, _ = _input.as_targets(y.iloc[::-1], "classification", m, ids)
        np.testing.assert_array_equal(ya, self.y01.astype(float))
        # A row left out is a missing value (test_irregular.py has more).
        gap = _input.as_data(long.iloc[1:])
        self.assertEqual(int(np.isnan(gap.X).sum()), 1)
        gap = _input.as_data(cols.iloc[1:], feature_names=names)
        self.assertEqual(int(np.isnan(gap.X).sum()), d)
        with self.assertRaisesRegex(ValueError, r"^X: a DataFrame must be wide"):
            _input.as_data(pd.DataFrame({"a": [1.0]}))
        with self.assertRaisesRegex(ValueError, r"^feature_names: \['zz'\] are not columns of X"):
            _input.as_data(cols, feature_names=["zz"])

    def test_method_doc_from_the_table(self):
        table = tempora.method_table()
        for m in table.methods:
            doc = tempora.method_doc(m.name.lower())
            self.assertTrue(doc.startswith(m.name + ": "), doc)
            self.assertIn("Parameters\n----------\n", doc)
            for p in table.params(m):
                self.assertIn("\n%s : %s, default " % (p.keyword, _help.PYTHON_TYPES[p.kind]), doc)


class OutputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        X, y01, _ = labelled()
        cls.e = tempora.explain(_models.logistic, X, y01, task="classification", feature_names=list("abcdef"),
                                **fast())

    @need(HAVE_PANDAS, "pandas")
    def test_to_dataframe(self):
        e = self.e
        df = e.to_dataframe()
        self.assertEqual(list(df.index), list("abcdef"))
        self.assertEqual(list(df.index[df["important"]]), e.important)
        for f in e.features:
            self.assertEqual(df.loc[f.name, "score"], f.score)
            if f.window is not None:
                self.assertEqual((df.loc[f.name, "window_start"], df.loc[f.name, "window_end"]), f.window)
        cells = e.to_dataframe("cells")
        self.assertEqual(len(cells), e.num_features * e.num_timesteps)
        self.assertEqual(cells.loc[("c", 7), "score"], e.cells[2, 7])
        w = e.feature("a").window
        self.assertTrue(cells.loc[("a", w[0]), "in_window"])
        with self.assertRaisesRegex(ValueError, "kind must be"):
            e.to_dataframe("rows")

    @need(HAVE_MPL, "matplotlib")
    def test_plot(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ax = self.e.plot()
        self.assertEqual([t.get_text() for t in ax.get_yticklabels()][:1], ["a *" + (" o" if self.e.feature("a").ordering_important else "")])
        boxes = [p for p in ax.patches]
        self.assertEqual(len(boxes), sum(len(f.windows) for f in self.e.features))
        self.assertGreater(len(boxes), 0)
        ax2 = self.e.plot(features=2)
        self.assertEqual(len(ax2.get_yticklabels()), 2)
        plt.close("all")

    def test_repr_html(self):
        h = self.e._repr_html_()
        self.assertIn("<table>", h)
        self.assertLess(h.index(">a<"), h.index(">b<"))  # important first
        self.assertIn("important: a, c", h)


def two_windows_doc():
    """An explanation document with the program's layout in which feature
    "a" has two windows, [1, 2] significant (its ordering matters) and
    [5, 6] not, and "b" none."""
    def window(w, sr, er, p, sig, op):
        return {"window": w, "start_range": sr, "end_range": er, "score": 0.5, "p_value": p, "p_adjusted": p,
                "significant": sig, "ordering_p_value": op, "ordering_p_adjusted": op,
                "ordering_important": op is not None and op < 0.05}
    a = {"index": 0, "name": "a", "tested": True, "important": True, "score": 1.0, "p_value": 0.01,
         "p_adjusted": 0.02, "window": [1, 2], "window_score": 0.5, "window_p_value": 0.01,
         "window_p_adjusted": 0.01, "window_significant": True, "ordering_p_value": 0.5,
         "ordering_p_adjusted": 0.5, "ordering_important": False, "window_ordering_p_value": 0.01,
         "window_ordering_important": True,
         "windows": [window([1, 2], [0, 1], [2, 2], 0.01, True, 0.01), window([5, 6], [5, 5], [6, 7], 0.3, False, None)]}
    b = {"index": 1, "name": "b", "tested": True, "important": False, "score": 0.0, "p_value": 0.9,
         "p_adjusted": 0.9, "window": None, "window_score": 0.0, "window_p_value": None,
         "window_p_adjusted": None, "window_significant": False, "ordering_p_value": None,
         "ordering_p_adjusted": None, "ordering_important": False, "window_ordering_p_value": None,
         "window_ordering_important": False}
    return {"method": "TIME", "num_features": 2, "num_timesteps": 8, "features": [a, b],
            "cells": [[0.0] * 8, [0.0] * 8],
            "accounting": {"model_calls": 1, "instance_evaluations": 1, "window_probes": 1}, "warnings": []}


class WindowsTest(unittest.TestCase):
    """A feature's list of windows (decision 18): typed fields, the
    DataFrame's windows column and one box per window on the plot."""

    def setUp(self):
        self.e = tempora.Explanation(two_windows_doc())

    def test_fields(self):
        a, b = self.e.features
        self.assertEqual([w.window for w in a.windows], [(1, 2), (5, 6)])
        w1, w2 = a.windows
        self.assertIsInstance(w1, tempora.WindowResult)
        self.assertEqual((w1.start_range, w1.end_range), ((0, 1), (2, 2)))
        self.assertEqual((w2.start_range, w2.end_range), ((5, 5), (6, 7)))
        self.assertEqual((w1.significant, w1.ordering_important, w1.p_value), (True, True, 0.01))
        self.assertEqual((w2.significant, w2.ordering_important, w2.p_adjusted), (False, False, 0.3))
        self.assertTrue(np.isnan(w2.ordering_p_value) and np.isnan(w2.ordering_p_adjusted))
        self.assertEqual(b.windows, ())

    def test_program_json(self):
        # The program's own output (the CLI's golden file) reads into the
        # same fields.
        path = os.path.join(os.path.dirname(os.path.dirname(HERE)), "cli", "testdata", "explain-time.json")
        with open(path) as fh:
            doc = json.load(fh)
        e = tempora.Explanation(doc)
        for f, d in zip(e.features, doc["features"]):
            want = d.get("windows") or []
            self.assertEqual(len(f.windows), len(want))
            for w, dw in zip(f.windows, want):
                self.assertEqual((w.window, w.start_range, w.end_range),
                                 tuple(tuple(dw[k]) for k in ("window", "start_range", "end_range")))
                self.assertEqual((w.score, w.significant), (dw["score"], dw["significant"]))
        self.assertGreater(sum(len(f.windows) for f in e.features), 0)

    @need(HAVE_PANDAS, "pandas")
    def test_dataframe_column(self):
        df = self.e.to_dataframe()
        self.assertEqual(df.columns[-1], "windows")
        # * marks a significant window, o a window whose ordering matters.
        self.assertEqual(list(df["windows"]), ["1-2*o;5-6", ""])

    @need(HAVE_MPL, "matplotlib")
    def test_plot_boxes(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ax = self.e.plot()
        boxes = sorted((p.get_x(), p.get_width(), p.get_linestyle()) for p in ax.patches)
        self.assertEqual(boxes, [(0.5, 2, "-"), (4.5, 2, ":")])
        plt.close("all")


class ProgressTest(unittest.TestCase):
    """progress=True shows the program's progress lines (tqdm when
    installed, else plain lines), progress=False nothing; the lines never
    reach the error messages."""

    def run_captured(self, **kw):
        import contextlib
        import io
        X, y01, _ = labelled(200)
        buf = io.StringIO()
        with contextlib.redirect_stderr(buf):
            e = tempora.explain(_models.logistic, X, y01, task="classification", method="OCC", **kw)
        return e, buf.getvalue()

    def test_progress(self):
        e, err = self.run_captured(progress=True)
        self.assertNotIn('{"progress"', err)
        # OCC's estimate is exact; the final report shows the whole count.
        total = e.accounting.instance_evaluations
        if importlib.util.find_spec("tqdm") is not None:
            self.assertRegex(err, r"OCC: 100%%\|.* %.3gk/%.3gk " % (total / 1e3, total / 1e3))
        else:
            self.assertIn("OCC: done: ", err)
        _, err = self.run_captured(progress=False)
        self.assertEqual(err, "")

    def test_progress_lines_without_tqdm(self):
        from tempora import _progress
        import contextlib
        import io
        p = _progress.Progress("TIME")
        p._tqdm = None
        buf = io.StringIO()
        with contextlib.redirect_stderr(buf):
            self.assertTrue(p.line('{"progress":{"evals":250000,"total":1000000,"exact":false,"elapsed":10}}'))
            self.assertFalse(p.line("tempora: TIME took 1s"))
            self.assertFalse(p.line("tempora: warning: TIME will make up to 2G instance evaluations"))
        self.assertEqual(buf.getvalue().splitlines(), [
            "tempora: TIME: 250k of at most 1M instance evaluations (25.0%), 10s elapsed, 30s left at most",
            "tempora: warning: TIME will make up to 2G instance evaluations"])

    def test_errors_name_the_argument(self):
        from tempora import _explain
        got = _explain._renamed("explain: -data /tmp/tempora-x1/X.npy: bad; -targets /tmp/tempora-x1/y.npy: bad",
                                {"/tmp/tempora-x1/X.npy": "X", "/tmp/tempora-x1/y.npy": "y"})
        self.assertEqual(got, "explain: X: bad; y: bad")

    def test_error_class_follows_the_kind(self):
        """The exception's class comes from the program's error object
        (docs/errors.md), never from its message."""
        from tempora import _errors
        for kind, cls in (("model", tempora.ModelError), ("prediction", tempora.ModelError),
                          ("error", tempora.TemporaError), ("usage", tempora.TemporaError)):
            info = {"kind": kind, "instance": None, "feature": None, "timestep": None, "message": "m", "detail": "m"}
            got = _errors.program_error("model reported an error", info)
            self.assertIs(type(got), cls, kind)
            self.assertEqual(got.kind, kind)
        # Without an error object (a program older than -errors), the
        # message alone makes no ModelError.
        self.assertIs(type(_errors.program_error("model reported an error", None)), tempora.TemporaError)


if __name__ == "__main__":
    unittest.main()
