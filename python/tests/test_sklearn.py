"""Models that state their input (issue 32): a fitted scikit-learn
estimator or pipeline of flattened rows is explained as it is, each
instance given as X.reshape(len(X), -1) of X in its layout, and explains
as a hand-written predict that flattens; a width it cannot take is an
error saying what it expects and what X gives. A PyTorch module whose
first layer reads as many features as X has timesteps is refused, naming
layout=."""

import importlib.util
import unittest
import warnings

import numpy as np

import tempora
from tempora import _input

HAVE_SKLEARN = importlib.util.find_spec("sklearn") is not None
HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_PANDAS = importlib.util.find_spec("pandas") is not None
from _need import need  # noqa: E402


def fast(**kw):
    kw.setdefault("seed", 5)
    kw.setdefault("progress", False)
    return kw


def data(m=240, d=3, length=5, seed=7):
    """X (m, d, length) and a binary y of feature 1 at timestep 3 and
    feature 2 at timestep 0, and a regression target of the same."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d, length))
    signal = 2.0 * X[:, 1, 3] - 1.5 * X[:, 2, 0]
    y = (signal + 0.5 * rng.normal(size=m) > 0).astype(int)
    return X, y, signal + 0.3 * rng.normal(size=m)


def flatten(x):
    return x.reshape(len(x), -1)


def doc(e):
    """The explanation's JSON without its running time."""
    d = e.to_dict()
    d["accounting"].pop("runtime_seconds", None)
    return d


class Recorder:
    """A scikit-learn-like regressor of rows of n values that records the
    rows it is given."""

    def __init__(self, n):
        self.n_features_in_ = n
        self.rows = []

    def predict(self, rows):
        self.rows.append(np.array(rows))
        return rows[:, 0]


@need(HAVE_SKLEARN, "scikit-learn")
class FlattenedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.X, cls.y, cls.yr = data()
        cls.F = cls.X.reshape(len(cls.X), -1)  # feature-major: column j*L + t

    def same_as_flattening(self, model, X, y, task, proba=True, **kw):
        """explain(model) equals explain of a hand-written predict that
        flattens X's batches in X's layout."""
        if task == "classification":
            def hand(x):
                return model.predict_proba(x.reshape(len(x), -1))[:, 1]
        else:
            def hand(x):
                return model.predict(x.reshape(len(x), -1))
        a = tempora.explain(model, X, y, task=task, **fast(**kw))
        b = tempora.explain(hand, X, y, task=task, **fast(**kw))
        self.assertEqual(doc(a), doc(b))
        return a

    def test_logistic_regression(self):
        from sklearn.linear_model import LogisticRegression
        est = LogisticRegression().fit(self.F, self.y)
        e = self.same_as_flattening(est, self.X, self.y, "classification")
        self.assertTrue({"1", "2"} <= set(e.important), e.important)
        # Its bound predict_proba is flattened too.
        b = tempora.explain(est.predict_proba, self.X, self.y, task="classification", **fast())
        self.assertEqual(doc(b), doc(e))

    def test_pipeline(self):
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler
        pipe = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression())]).fit(self.F, self.y)
        e = self.same_as_flattening(pipe, self.X, self.y, "classification")
        self.assertTrue({"1", "2"} <= set(e.important), e.important)

    def test_hist_gradient_boosting(self):
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
        X, y, yr = self.X[:120], self.y[:120], self.yr[:120]
        F = X.reshape(len(X), -1)
        clf = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(F, y)
        self.same_as_flattening(clf, X, y, "classification", permutations=20)
        reg = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(F, yr)
        e = self.same_as_flattening(reg, X, yr, "regression", permutations=20)
        self.assertIn("1", e.important)

    def test_time_major_for_nld(self):
        # layout="nld": the rows are X.reshape(len(X), -1) of the
        # (instances, timesteps, features) array the caller passes.
        from sklearn.linear_model import LogisticRegression
        Xn = np.ascontiguousarray(self.X.transpose(0, 2, 1))
        est = LogisticRegression().fit(Xn.reshape(len(Xn), -1), self.y)
        self.same_as_flattening(est, Xn, self.y, "classification", layout="nld")

    def test_model_factory(self):
        from sklearn.linear_model import LinearRegression
        est = LinearRegression().fit(self.F, self.yr)
        a = tempora.explain(None, self.X, self.yr, task="regression", model_factory=lambda: est, model_procs=2,
                            mp_context="fork", **fast())
        b = tempora.explain(lambda x: est.predict(x.reshape(len(x), -1)), self.X, self.yr, task="regression",
                            **fast())
        self.assertEqual(doc(a), doc(b))

    @need(HAVE_PANDAS, "pandas")
    def test_dataframe_rows_are_feature_major(self):
        import pandas as pd
        from sklearn.linear_model import LogisticRegression
        m, d, length = self.X.shape
        idx = pd.MultiIndex.from_product([range(m), range(length)], names=["instance", "time"])
        wide = pd.DataFrame(self.X.transpose(0, 2, 1).reshape(m * length, d), index=idx,
                            columns=["a", "b", "c"])
        F = tempora.as_array(wide).reshape(m, -1)
        np.testing.assert_array_equal(F, self.F)
        est = LogisticRegression().fit(F, self.y)
        e = self.same_as_flattening(est, wide, self.y, "classification")
        self.assertTrue({"b", "c"} <= set(e.important), e.important)

    def test_row_order(self):
        # The rows the estimator receives, by layout: feature-major for
        # "ndl" (column j*L + t), time-major for "nld" (column t*D + j).
        batch = np.arange(2 * 3 * 5, dtype=float).reshape(2, 3, 5)  # the program's (m, D, L)
        for layout, want in (("ndl", batch.reshape(2, -1)), ("nld", batch.transpose(0, 2, 1).reshape(2, -1))):
            with self.subTest(layout=layout):
                rec = Recorder(15)
                p = _input.as_predict(rec, "regression", layout, None, 0, (3, 5), "array")
                np.testing.assert_array_equal(p(batch), want[:, 0])
                np.testing.assert_array_equal(rec.rows[0], want)
                self.assertEqual(want[0, 1 * 5 + 3] if layout == "ndl" else want[0, 3 * 3 + 1], batch[0, 1, 3])

    def test_other_widths_are_errors(self):
        from sklearn.linear_model import LogisticRegression
        cases = (
            (self.X[:, 0, :], "ndl", r"n_features_in_=5\b.*3 features x 5 timesteps.*15 values \(feature-major.*5 is "
                                     r"X's number of timesteps.*pass layout='nld'"),
            (self.F[:, :7], "ndl", r"states rows of 7 values \(n_features_in_=7\), but X has 3 features x 5 "
                                   r"timesteps"),
            (self.X[:, :, -1], "nld", r"n_features_in_=3\b.*15 values \(time-major.*column t\*D \+ j.*3 is X's "
                                      r"number of features.*takes layout='ndl'"),
        )
        for rows, layout, want in cases:
            with self.subTest(width=rows.shape[1], layout=layout):
                est = LogisticRegression().fit(rows, self.y)
                X = self.X if layout == "ndl" else self.X.transpose(0, 2, 1)
                with self.assertRaisesRegex(ValueError, want):
                    tempora.explain(est, X, self.y, task="classification", layout=layout, **fast())

    def test_fitted_on_arrays_of_the_layout(self):
        # A pipeline fitted on X's 3-D arrays (it flattens them itself)
        # states n_features_in_ = X.shape[1]: it is given the batches as X
        # has them.
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import FunctionTransformer
        pipe = make_pipeline(FunctionTransformer(flatten), LogisticRegression()).fit(self.X, self.y)
        self.assertEqual(pipe.n_features_in_, 3)
        a = tempora.explain(pipe, self.X, self.y, task="classification", **fast())
        b = tempora.explain(lambda x: pipe.predict_proba(x)[:, 1], self.X, self.y, task="classification", **fast())
        self.assertEqual(doc(a), doc(b))
        # A model of one value per feature states the same width, and
        # fails on the batches: the error says what it was given.
        est = LogisticRegression().fit(self.X[:, :, -1], self.y)
        with self.assertRaisesRegex(tempora.ModelError, r"n_features_in_=3, the size of axis 1 of X \(layout='ndl'\), "
                                                        r"so it was given 3-D batches .*, 3, 5\).*flattened, 15 values"):
            tempora.explain(est, self.X, self.y, task="classification", **fast())

    def test_models_that_state_nothing_get_batches(self):
        # Without n_features_in_ (an unfitted or custom model), batches are
        # 3-D as before.
        class Model:
            def predict(self, x):
                assert x.ndim == 3
                return x[:, 0, 0]

        p = _input.as_predict(Model(), "regression", "ndl", None, 0, (3, 5), "array")
        p(np.zeros((2, 3, 5)))


@need(HAVE_TORCH, "torch")
class TorchLayoutTest(unittest.TestCase):
    def check(self, model, X, layout="ndl"):
        data = _input.as_data(X, layout)
        return _input.as_predict(model, "regression", layout, None, 0, data.X.shape[1:], data.source)

    def test_recurrent_first_layer(self):
        import torch

        class Net(torch.nn.Module):
            def __init__(self, d):
                super().__init__()
                self.rnn = torch.nn.GRU(d, 4, batch_first=True)
                self.out = torch.nn.Linear(4, 1)

            def forward(self, x):
                h, _ = self.rnn(x)
                return self.out(h[:, -1])[:, 0]

        net = Net(3).double().eval()
        Xn = np.zeros((10, 8, 3))  # (instances, timesteps, features)
        with self.assertRaisesRegex(ValueError, r"first layer nn.GRU\(input_size=3\) reads 3 features per timestep, "
                                                r"but with layout='ndl' .* 8 features x 3 timesteps.* pass "
                                                r"layout='nld'"):
            self.check(net, Xn)
        with self.assertRaisesRegex(ValueError, r"nn.GRU\(input_size=3\)"):
            tempora.explain(net, Xn, np.zeros(10), task="regression", **fast())
        self.check(net, Xn, "nld")  # as the model states
        # The list form takes layout= too.
        with self.assertRaisesRegex(ValueError, "pass layout='nld'"):
            self.check(net, [x for x in Xn])
        # Swapped the other way: data (instances, features, timesteps)
        # given as "nld".
        with self.assertRaisesRegex(ValueError, r"with layout='nld'.*pass layout='ndl'"):
            self.check(net, np.zeros((10, 3, 8)), "nld")
        # As many features as timesteps: nothing to tell.
        self.check(Net(4).double().eval(), np.zeros((10, 4, 4)))

    def test_conv1d_first_layer(self):
        import torch
        net = torch.nn.Sequential(torch.nn.Conv1d(3, 2, 2), torch.nn.Flatten(), torch.nn.Linear(14, 1)).double()
        net.eval()
        self.check(net, np.zeros((10, 3, 8)))
        with self.assertRaisesRegex(ValueError, r"nn.Conv1d\(in_channels=3\) reads 3 features.*layout='nld'"):
            self.check(net, np.zeros((10, 8, 3)))

    def test_linear_first_layer_states_no_layout(self):
        # A linear layer may read the features (per-timestep projection)
        # or the timesteps (a linear model of each feature's series): both
        # layouts are legitimate, so nothing is refused.
        import torch
        over_time = torch.nn.Sequential(torch.nn.Linear(8, 1), torch.nn.Flatten(), torch.nn.Linear(3, 1)).double()
        self.check(over_time.eval(), np.zeros((10, 3, 8)))

    @need(HAVE_PANDAS, "pandas")
    def test_dataframe_features_are_columns(self):
        import pandas as pd
        import torch
        lstm = torch.nn.Sequential(torch.nn.LSTM(2, 3, batch_first=True)).double().eval()
        idx = pd.MultiIndex.from_product([range(4), range(2)], names=["instance", "time"])
        wide = pd.DataFrame(np.zeros((8, 5)), index=idx, columns=list("abcde"))
        self.check(lstm, wide)  # a DataFrame's features are its columns: no axis to swap


@need(HAVE_TORCH, "torch")
class TrainingModeTest(unittest.TestCase):
    def warned(self, model):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _input.as_predict(model, "classification", "ndl", None)
        return [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]

    def test_sequential_around_an_evaluated_net(self):
        # The README's nn.Sequential(net, nn.Sigmoid()) made after
        # net.eval(): the container is in training mode, nothing in it
        # depends on the mode.
        import torch
        net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Dropout(0.3), torch.nn.BatchNorm1d(6),
                                  torch.nn.Linear(6, 1))
        net.eval()
        model = torch.nn.Sequential(net, torch.nn.Sigmoid())
        self.assertTrue(model.training)
        self.assertEqual(self.warned(model), [])

    def test_mode_dependent_parts_in_training(self):
        import torch
        for model, part in (
                (torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Dropout(0.3), torch.nn.Linear(6, 1)),
                 r"1 \(Dropout\)"),
                (torch.nn.Sequential(torch.nn.Flatten(), torch.nn.BatchNorm1d(6)), r"1 \(BatchNorm1d\)"),
                (torch.nn.Sequential(torch.nn.LSTM(2, 3, num_layers=2, dropout=0.2)), r"0 \(LSTM\)")):
            with self.subTest(part=part):
                got = self.warned(model)
                self.assertEqual(len(got), 1, got)
                self.assertRegex(got[0], r"training mode.*model\.eval\(\).*%s" % part)
        # No dropout in the LSTM: its mode changes nothing.
        self.assertEqual(self.warned(torch.nn.Sequential(torch.nn.LSTM(2, 3, num_layers=2))), [])


if __name__ == "__main__":
    unittest.main()
