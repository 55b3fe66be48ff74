"""Irregular input (issue 18): arrays with NaN, lists of per-instance arrays
of different lengths, long DataFrames with unequal lengths and gaps, the
alignment= and mask= arguments, and a clear error, naming the Python
argument, for every bad irregular input. The data rules are the program's:
what it refuses comes back as a DataError whose fields (kind, argument,
instance, feature, time, index) the tests check in the caller's terms."""

import importlib.util
import os
import unittest
import warnings

import numpy as np

import tempora
from tempora import _input
from tempora._explanation import Explanation

HAVE_PANDAS = importlib.util.find_spec("pandas") is not None
CI = os.environ.get("CI") == "true"
nan = np.nan


def need_pandas(f):
    if HAVE_PANDAS or CI:
        return f
    return unittest.skip("pandas is not installed")(f)


def sequences():
    """Three instances of 2 features: lengths 3, 2 and 1."""
    return [np.array([[1.0, 2, 3], [4, 5, 6]]), np.array([[7.0, 8], [9, 10]]), np.array([[11.0], [12]])]


def refused(test, X, **kw):
    """The DataError tempora.as_array (the program's check) raises for X."""
    with test.assertRaises(tempora.DataError) as cm:
        tempora.as_array(X, **kw)
    e = cm.exception
    test.assertIsInstance(e, ValueError)  # an error about an argument, as before
    return e


class ArrayInputTest(unittest.TestCase):
    def test_nan_is_missing(self):
        X = np.arange(12.0).reshape(2, 2, 3)
        X[0, 1, 2] = nan
        d = _input.as_data(X)
        np.testing.assert_array_equal(d.X, X)
        self.assertEqual(d.alignment, "start")
        self.assertEqual(_input.as_data(X, alignment="end").alignment, "end")
        # nld: the NaN moves with its cell.
        d = _input.as_data(X.transpose(0, 2, 1), layout="nld")
        np.testing.assert_array_equal(d.X, X)

    def test_infinity_names_the_cell_in_the_callers_layout(self):
        X = np.zeros((2, 3, 4))
        X[1, 2, 3] = -np.inf
        X[0, 0, 0] = np.nan  # a missing value: no error
        e = refused(self, X)
        self.assertEqual((e.kind, e.argument, e.index, e.instance, e.feature, e.time, e.value, e.count),
                         ("infinite", "X", (1, 2, 3), 1, 2, 3, -np.inf, 1))
        self.assertIn("(the first at index (1, 2, 3))", str(e))
        e = refused(self, X, layout="nld")  # (instances, timesteps, features): instance 1, timestep 2, feature 3
        self.assertEqual((e.index, e.instance, e.feature, e.time), ((1, 2, 3), 1, 3, 2))
        X[0, 1, 1] = np.inf
        self.assertEqual(refused(self, X).count, 2)

    def test_instance_or_feature_with_nothing_observed(self):
        X = np.ones((3, 2, 4))
        X[1] = nan
        e = refused(self, X)
        self.assertEqual((e.kind, e.argument, e.instance, e.feature), ("unobserved-instance", "X", 1, None))
        X = np.ones((3, 2, 4))
        X[:, 1] = nan
        e = refused(self, X, feature_names=["a", "b"])
        self.assertEqual((e.kind, e.argument, e.instance, e.feature), ("unobserved-feature", "X", None, "b"))

    def test_mask(self):
        X = np.arange(12.0).reshape(2, 2, 3)
        mask = np.ones((2, 2, 3), dtype=bool)
        mask[1, 0, 0] = False
        d = _input.as_data(X, mask=mask)
        self.assertTrue(np.isnan(d.X[1, 0, 0]))
        self.assertEqual(int(np.isnan(d.X).sum()), 1)
        self.assertFalse(np.isnan(X).any())  # the caller's X is left as it is
        np.testing.assert_array_equal(np.isnan(_input.as_data(X, mask=mask.astype(int)).X), ~mask)
        # In the caller's layout.
        d = _input.as_data(X.transpose(0, 2, 1), layout="nld", mask=mask.transpose(0, 2, 1))
        self.assertTrue(np.isnan(d.X[1, 0, 0]))
        with self.assertRaisesRegex(ValueError, r"^mask has shape \(2, 3, 2\) but X has shape \(2, 2, 3\)"):
            _input.as_data(X, mask=mask.transpose(0, 2, 1))
        with self.assertRaisesRegex(ValueError, r"^mask must hold booleans or 0/1 \(1: observed\); it holds 0\.5 at "
                                                r"index \(0, 0, 0\)"):
            _input.as_data(X, mask=np.full((2, 2, 3), 0.5))
        with self.assertRaisesRegex(ValueError, r"^mask must hold booleans or 0/1"):
            _input.as_data(X, mask=np.full((2, 2, 3), "yes"))
        # A NaN the mask marks observed is missing all the same, and said so
        # (as -mask on the command line), at its index in the caller's layout.
        Xn = X.copy()
        Xn[0, 1, 2] = nan
        with self.assertWarnsRegex(UserWarning, r"^mask marks 1 cell observed where X holds NaN \(the first at "
                                                r"instance 0, feature 1, timestep 2\): they are missing$"):
            d = _input.as_data(Xn, mask=np.ones((2, 2, 3), dtype=bool))
        self.assertTrue(np.isnan(d.X[0, 1, 2]))
        with self.assertWarnsRegex(UserWarning, r"^mask marks 1 cell observed where X holds NaN \(the first at "
                                                r"instance 0, timestep 2, feature 1\)"):
            _input.as_data(Xn.transpose(0, 2, 1), layout="nld", mask=np.ones((2, 3, 2), dtype=bool))
        unmarked = np.ones((2, 2, 3), dtype=bool)
        unmarked[0, 1, 2] = False
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _input.as_data(Xn, mask=unmarked)  # the mask agrees with X: no warning
        everything = np.zeros((2, 2, 3), dtype=bool)
        everything[1] = True
        e = refused(self, X, mask=everything)
        self.assertEqual((e.kind, e.instance), ("unobserved-instance", 0))
        self.assertIn("(every value is NaN or masked)", str(e))

    def test_alignment_argument(self):
        with self.assertRaisesRegex(ValueError, r"^alignment must be 'start' .* or 'end' .*got 'left'"):
            _input.as_data(np.zeros((1, 1, 1)), alignment="left")


class ListInputTest(unittest.TestCase):
    def test_start_and_end(self):
        start = _input.as_data(sequences()).X
        np.testing.assert_array_equal(start, [[[1, 2, 3], [4, 5, 6]], [[7, 8, nan], [9, 10, nan]],
                                              [[11, nan, nan], [12, nan, nan]]])
        end = _input.as_data(sequences(), alignment="end").X
        np.testing.assert_array_equal(end, [[[1, 2, 3], [4, 5, 6]], [[nan, 7, 8], [nan, 9, 10]],
                                            [[nan, nan, 11], [nan, nan, 12]]])
        # nld: each array (timesteps, features); lists of lists too.
        nld = _input.as_data([s.T.tolist() for s in sequences()], layout="nld", alignment="end").X
        np.testing.assert_array_equal(nld, end)
        # A list of equal-length arrays is the array they stack to.
        X = np.arange(24.0).reshape(2, 3, 4)
        np.testing.assert_array_equal(_input.as_data(list(X)).X, X)

    def test_gaps_and_mask(self):
        seqs = sequences()
        seqs[0][1, 1] = nan
        masks = [np.ones(s.shape, dtype=bool) for s in seqs]
        masks[1][0, 0] = False
        with self.assertWarnsRegex(UserWarning, r"^mask marks 1 cell observed where X holds NaN \(the first at "
                                                r"instance 0, feature 1, timestep 1\): they are missing$"):
            X = _input.as_data(seqs, mask=masks, alignment="end").X
        # One warning for the whole list, counting every sequence's cells.
        seqs[2][0, 0] = nan
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            _input.as_data(seqs, mask=masks, alignment="end")
        self.assertEqual([str(w.message) for w in got],
                         ["mask marks 2 cells observed where X holds NaN (the first at instance 0, feature 1, "
                          "timestep 1): they are missing"])
        self.assertTrue(np.isnan(X[0, 1, 1]) and np.isnan(X[1, 0, 1]))
        self.assertEqual(X[1, 0, 2], 8)
        self.assertEqual(seqs[1][0, 0], 7)  # the caller's arrays are left as they are
        with self.assertRaisesRegex(ValueError, r"^mask\[2\] has shape \(2, 2\) but X\[2\] has shape \(2, 1\)"):
            _input.as_data(seqs, mask=masks[:2] + [np.ones((2, 2))])
        with self.assertRaisesRegex(ValueError, r"^mask: with a list X, mask is a list of 3 arrays"):
            _input.as_data(seqs, mask=np.ones((3, 2, 3)))

    def test_errors(self):
        seqs = sequences()
        with self.assertRaisesRegex(ValueError, r"^X\[1\] has 3 features but X\[0\] has 2: each array of a list X "
                                                r"is \(features, timesteps\) \(layout='ndl'\)"):
            _input.as_data([seqs[0], np.zeros((3, 2))])
        with self.assertRaisesRegex(ValueError, r"^X\[1\] has no timesteps"):
            _input.as_data([seqs[0], np.zeros((2, 0))])
        with self.assertRaisesRegex(ValueError, r"^X\[1\] has shape \(4,\): each array of a list X is one "
                                                r"instance"):
            _input.as_data([seqs[0], np.zeros(4)])
        e = refused(self, seqs[:2] + [np.full((2, 1), nan)])
        self.assertEqual((e.kind, e.instance), ("unobserved-instance", 2))
        # The cell in X[1]'s own terms: end-aligned, X[1]'s timestep 1 is
        # the axis's last.
        e = refused(self, [seqs[0], np.array([[0, np.inf], [0, 0]])], alignment="end")
        self.assertEqual((e.kind, e.instance, e.feature, e.time, e.index), ("infinite", 1, 0, 1, (0, 1)))
        self.assertIn("(the first at X[1][0, 1])", str(e))
        e = refused(self, [np.array([[1.0, 2], [nan, nan]]).T, np.array([[3.0], [nan]]).T], layout="nld",
                    alignment="end")
        self.assertEqual((e.kind, e.feature), ("unobserved-feature", 1))
        e = refused(self, [np.array([[0.0, 1], [np.inf, 0]]).T, np.array([[3.0], [1]]).T], layout="nld")
        self.assertEqual((e.instance, e.feature, e.time, e.index), (0, 1, 0, (0, 1)))  # X[0][t=0, feature 1]


@need_pandas
class DataFrameInputTest(unittest.TestCase):
    def long(self):
        import pandas as pd
        # Instance "b" is shorter (no time 2) and lacks hr at time 1;
        # bp at a time 0 is given as NaN.
        return pd.DataFrame({
            "instance": ["a", "a", "a", "a", "a", "a", "b", "b", "b"],
            "time": [0, 0, 1, 1, 2, 2, 0, 0, 1],
            "feature": ["hr", "bp", "hr", "bp", "hr", "bp", "hr", "bp", "bp"],
            "value": [1.0, 2, 3, 4, 5, 6, 7, nan, 8],
        })

    def test_long_unequal_lengths_and_gaps(self):
        d = _input.as_data(self.long().sample(frac=1, random_state=1))
        self.assertEqual(d.names, ["bp", "hr"])
        self.assertEqual(d.instances, ["a", "b"])
        np.testing.assert_array_equal(d.X, [[[2, 4, 6], [1, 3, 5]], [[nan, 8, nan], [7, nan, nan]]])

    def test_long_end_aligned_times(self):
        # Hours before the end as negative times: the time axis is their
        # union, so the sequences' ends line up.
        df = self.long()
        df["time"] = df["time"] - df.groupby("instance")["time"].transform("max")
        d = _input.as_data(df, alignment="end")
        self.assertEqual(d.alignment, "end")
        np.testing.assert_array_equal(d.X, [[[2, 4, 6], [1, 3, 5]], [[nan, nan, 8], [nan, 7, nan]]])

    def test_time_stamps_warn(self):
        import pandas as pd
        rng = np.random.default_rng(2)
        rows = [(i, float(t), "hr", 1.0) for i in range(20) for t in np.sort(rng.uniform(0, 24, size=6))]
        with self.assertWarnsRegex(UserWarning, r"^X: the DataFrame has 120 distinct times but no instance has "
                                                r"more than 6: .*bin them"):
            _input.as_data(pd.DataFrame(rows, columns=["instance", "time", "feature", "value"]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # hourly steps of unequal lengths: no warning
            df, _ = patients(0, n=30)
            _input.as_data(df)
            _input.as_data(self.long())

    def test_wide_missing_rows(self):
        import pandas as pd
        idx = pd.MultiIndex.from_tuples([("a", 0), ("a", 1), ("b", 0)], names=["instance", "time"])
        wide = pd.DataFrame({"bp": [4.0, nan, 6], "hr": [1.0, 2, 3]}, index=idx)
        np.testing.assert_array_equal(_input.as_data(wide).X, [[[4, nan], [1, 2]], [[6, nan], [3, nan]]])
        cols = wide.reset_index()
        np.testing.assert_array_equal(_input.as_data(cols).X, _input.as_data(wide).X)

    def test_errors(self):
        import pandas as pd
        df = self.long()
        with self.assertRaisesRegex(ValueError, r"^X: the long DataFrame has 2 rows for \(instance, time, feature\) = "
                                                r"\('a', 1, 'hr'\)"):
            _input.as_data(pd.concat([df, df.iloc[[2]]]))
        inf = df.copy()
        inf.loc[4, "value"] = np.inf
        e = refused(self, inf)  # the DataFrame's own names: no index
        self.assertEqual((e.kind, e.instance, e.time, e.feature, e.index), ("infinite", "a", 2, "hr", None))
        self.assertIn("(the first at instance 'a', time 2, feature 'hr')", str(e))
        empty = df.copy()
        empty.loc[df["instance"] == "b", "value"] = nan
        e = refused(self, empty)
        self.assertEqual((e.kind, e.instance), ("unobserved-instance", "b"))
        never = df.copy()
        never.loc[df["feature"] == "bp", "value"] = nan
        e = refused(self, never)
        self.assertEqual((e.kind, e.feature), ("unobserved-feature", "bp"))
        # The names are the program's to check too: here the columns.
        wide = df.pivot(index=["instance", "time"], columns="feature", values="value")
        wide.columns = ["hr ", "bp"]
        e = refused(self, wide)
        self.assertEqual((e.kind, e.argument, e.feature), ("feature-names", "X's columns", "hr "))
        notime = df.copy()
        notime.loc[3, "time"] = nan
        with self.assertRaisesRegex(ValueError, r"^X: the long DataFrame's time column has missing values \(row 3\)"):
            _input.as_data(notime)
        with self.assertRaisesRegex(ValueError, r"^mask: a DataFrame X marks its missing values itself"):
            _input.as_data(df, mask=np.ones((2, 2, 3)))
        idx = pd.MultiIndex.from_tuples([("a", 0), ("a", 0)], names=["instance", "time"])
        with self.assertRaisesRegex(ValueError, r"^X: the DataFrame has more than one row for \(instance, time\) = "
                                                r"\('a', 0\)"):
            _input.as_data(pd.DataFrame({"hr": [1.0, 2]}, index=idx))


def observed_mean(batch):
    """A model of feature 0's observed values (their mean): it takes NaN."""
    return np.nanmean(batch[:, 0, :], axis=1)


class ExplainTest(unittest.TestCase):
    def test_targets_may_not_be_missing(self):
        def never(batch):
            raise AssertionError("predict called on refused targets")

        with self.assertRaises(ValueError) as cm:
            tempora.explain(never, np.ones((3, 1, 2)), [1.0, nan, 2.0], task="regression", progress=False)
        e = cm.exception
        self.assertIsInstance(e, tempora.DataError)
        self.assertEqual((e.kind, e.argument, e.instance, e.index, e.count), ("target", "y", 1, (1,), 1))
        self.assertIn("a target may not be missing", str(e))
        with self.assertRaises(tempora.DataError) as cm:
            tempora.explain(never, np.ones((3, 1, 2)), [1.0, 2.0], task="regression", progress=False)
        self.assertEqual((cm.exception.kind, cm.exception.argument), ("targets", "y"))

    @need_pandas
    def test_method_that_needs_complete_data(self):
        """A method that refuses missing values (LIME) names the first one
        in the DataFrame's terms, with the program's reason."""
        import pandas as pd
        df = pd.DataFrame({"instance": ["a", "a", "b", "b", "c", "c"], "time": [0, 1, 0, 1, 0, 1],
                           "hr": [1.0, 2, 3, nan, 1, 1], "bp": [1.0, 2, 3, 4, nan, 1]})
        with self.assertRaises(tempora.DataError) as cm:
            tempora.explain(observed_mean, df, [1.0, 2, 3], task="regression", method="lime", progress=False)
        e = cm.exception
        self.assertEqual((e.kind, e.argument, e.instance, e.time, e.feature, e.count, e.index),
                         ("missing", "X", "b", 1, "hr", 2, None))
        self.assertIn("at instance 'b', time 1, feature 'hr'", str(e))
        self.assertIn("LIME needs complete data", str(e))

    def test_arguments_are_named(self):
        with self.assertRaisesRegex(ValueError, r"^alignment must be"):
            tempora.explain(observed_mean, np.ones((3, 1, 2)), [1.0, 2.0, 3.0], task="regression", alignment="late",
                            progress=False)
        with self.assertRaisesRegex(ValueError, r"^mask has shape"):
            tempora.explain(observed_mean, np.ones((3, 1, 2)), [1.0, 2.0, 3.0], task="regression",
                            mask=np.ones((3, 2, 1)), progress=False)

    def test_missing_values_reach_the_program(self):
        """Data with missing values is handed to the program: either the
        explanation comes back (with its alignment) or the program's
        refusal does, and the message never names a temporary file."""
        rng = np.random.default_rng(4)
        seqs = [rng.normal(size=(2, n)) for n in rng.integers(3, 7, size=60)]
        y = np.array([s[0].mean() for s in seqs]) + rng.normal(scale=0.1, size=len(seqs))
        e = tempora.explain(observed_mean, seqs, y, task="regression", alignment="end", seed=1, progress=False,
                            permutations=50)
        self.assertEqual(e.alignment, "end")
        self.assertEqual(e.num_timesteps, 6)
        self.assertEqual(e.important, ["0"])
        # What the report counts: every sequence's length, each feature's
        # missing rate within the sequences (no gaps here: 0).
        np.testing.assert_array_equal(e.lengths, [s.shape[1] for s in seqs])
        np.testing.assert_array_equal(e.missing_rate, [0.0, 0.0])
        n = sorted(s.shape[1] for s in seqs)
        line = "%d of 60 instances shorter than 6 timesteps; lengths min %d, median %d, max %d" % (
            sum(k < 6 for k in n), n[0], n[30], n[-1])
        self.assertIn(line, str(e))  # the program's report
        self.assertIn(line, e._repr_html_())  # the notebook's table, in the same words

    def test_data_summary_is_the_programs(self):
        """lengths, missing_rate and observed come from the program's JSON
        and are what NumPy computes on the same X, start- and end-aligned:
        lengths int64, the rates and shares float64, equal to the last
        bit."""
        rng = np.random.default_rng(7)
        m, d, length = 40, 2, 6
        n = rng.integers(2, length + 1, size=m)
        for alignment in ("start", "end"):
            with self.subTest(alignment=alignment):
                X = rng.normal(size=(m, d, length))
                for i, k in enumerate(n):
                    if alignment == "start":
                        X[i, :, k:] = nan  # padding after the sequence
                    else:
                        X[i, :, :length - k] = nan  # padding before it
                inside = ~np.isnan(X[:, 0, :])  # feature 0 spans each sequence
                X[:, 1, :][inside & (rng.random((m, length)) < 0.25)] = nan  # gaps in feature 1
                y = observed_mean(X) + rng.normal(scale=0.1, size=m)
                e = tempora.explain(observed_mean, X, y, task="regression", alignment=alignment, seed=1,
                                    progress=False, permutations=20)
                cells = inside.sum()
                missing = np.array([(np.isnan(X[:, j, :]) & inside).sum() for j in range(d)]) / cells
                self.assertEqual(e.lengths.dtype, np.int64)
                self.assertEqual(e.missing_rate.dtype, np.float64)
                self.assertEqual(e.observed.dtype, np.float64)
                np.testing.assert_array_equal(e.lengths, n)
                np.testing.assert_array_equal(e.missing_rate, missing)
                self.assertEqual(e.missing_rate[0], 0.0)
                np.testing.assert_array_equal(e.observed, (~np.isnan(X)).mean(axis=0))
                # They are the JSON's: to_json and back keeps them.
                back = Explanation.from_json(e.to_json())
                np.testing.assert_array_equal(back.lengths, e.lengths)
                np.testing.assert_array_equal(back.observed, e.observed)
        # Complete data has none.
        X = rng.normal(size=(m, d, length))
        e = tempora.explain(observed_mean, X, observed_mean(X), task="regression", seed=1, progress=False,
                            permutations=20)
        self.assertIsNone(e.lengths)
        self.assertIsNone(e.missing_rate)
        self.assertIsNone(e.observed)
        self.assertNotIn("observed", e.to_dict())

    def test_a_model_that_fails_on_nan_is_named(self):
        """tempora never imputes: a model that cannot take NaN fails on
        its own side, and the error says so."""
        X = np.ones((20, 1, 4))
        X[3, 0, 1] = nan

        def strict(batch):
            if np.isnan(batch).any():
                raise ValueError("this model takes no NaN")
            return batch[:, 0, :].mean(1)

        with self.assertRaisesRegex(tempora.ModelError, "this model takes no NaN"):
            tempora.explain(strict, X, np.arange(20.0), task="regression", progress=False)


FEATURES = ["bp", "hr", "lactate", "spo2", "temp"]  # a long frame's features come in sorted order


def patients(seed, n=400, rate=0.2, null=False):
    """A long table as a hospital has it: n patients with 12 to 24 hourly
    rows each, five measurements a row, each missing (its row left out)
    with probability rate; and a generator for the targets' noise."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        for t in range(int(rng.integers(12, 25))):
            for f in FEATURES:
                if rng.random() >= rate:
                    rows.append(("p%03d" % i, t, f, rng.normal()))
    return pd.DataFrame(rows, columns=["instance", "time", "feature", "value"]), rng


def observed_mean_of(v):
    """The mean of the observed values of each row of v (0 when none is):
    a model that takes NaN, without NumPy's empty-slice warning."""
    n = (~np.isnan(v)).sum(axis=1)
    return np.nansum(v, axis=1) / np.maximum(n, 1)


def windowed(x):
    """Reads hr over hours 2 to 7 and lactate over hours 0 to 3 after
    admission (start-aligned), the mean of the observed values in each: a
    model blind to the order within its windows."""
    return 2 * observed_mean_of(x[:, 1, 2:8]) - 1.5 * observed_mean_of(x[:, 2, 0:4])


def order_blind(x):
    """The means of hr's and lactate's observed values over the whole
    stay: no order matters, neither over the sequence nor within a window."""
    return observed_mean_of(x[:, 1, :]) - observed_mean_of(x[:, 2, :])


def last_hours(x):
    """hr over the last 6 hours before discharge (end-aligned)."""
    return observed_mean_of(x[:, 1, -6:])


@need_pandas
class EndToEndTest(unittest.TestCase):
    """Issue 18's user: a pandas long table of unequal-length, gappy
    sequences (400 patients, 5 features, 12 to 24 hours, 20% of the
    measurements missing) and a NumPy model that takes NaN get the
    relevant features, windows inside the truth's aligned windows and
    ordering claims only where order matters.

    The truth is the model's own: which features it reads, over which
    aligned hours, and whether order within them matters. Targets are the
    model's output plus N(0, 0.3²) noise, so that the loss rises only where
    the model reads. At the time of writing these assertions held in 8 of 8
    seeds (0 to 7) for each model, every window exactly the truth's; three
    fixed seeds are checked, so a regression in the input path (a wrong
    time axis, a wrong alignment, padding permuted as data) fails them."""

    SEEDS = (0, 1, 2)

    def explain(self, model, seed, **kw):
        df, rng = patients(seed)
        X = _input.as_data(df, alignment=kw.get("alignment", "start")).X
        y = model(X) + rng.normal(scale=0.3, size=X.shape[0])
        return tempora.explain(model, df, y, task="regression", seed=seed, progress=False, **kw), X

    def check_windows(self, e, truth):
        for f in e.features:
            if f.name not in truth:
                self.assertEqual([w.window for w in f.windows if w.significant], [], f.name)
                continue
            lo, hi = truth[f.name]
            self.assertTrue(any(w.significant for w in f.windows), f.name)
            for w in f.windows:
                if w.significant:
                    self.assertTrue(lo <= w.window[0] <= w.window[1] <= hi, "%s: window %s outside the truth %s"
                                    % (f.name, w.window, (lo, hi)))

    def test_windowed_model(self):
        for seed in self.SEEDS:
            with self.subTest(seed=seed):
                e, X = self.explain(windowed, seed)
                self.assertEqual(e.important, ["hr", "lactate"])
                self.check_windows(e, {"hr": (2, 7), "lactate": (0, 3)})
                # Within its window the model averages: no order claim there.
                self.assertFalse(any(w.ordering_important for f in e.features for w in f.windows))
                self.assertEqual(e.times, list(range(24)))
                self.assertEqual(e.alignment, "start")
                frame = e.to_dataframe()
                self.assertAlmostEqual(frame.loc["hr", "missing_rate"], 0.2, delta=0.02)  # about 4 SE: 7200 cells, SE 0.0047

    def test_cells_and_plot(self):
        """An irregular explanation read as a user reads it: the cells
        frame carries the table's time and the share of instances observed
        in each cell; the plot labels its axis with the table's times."""
        e, X = self.explain(windowed, 0)
        cells = e.to_dataframe("cells")
        np.testing.assert_allclose(cells.loc["hr", "observed"], (~np.isnan(X[:, 1])).mean(axis=0))
        self.assertEqual(list(cells.loc["hr", "time"]), list(range(24)))
        # Every stay reaches hour 11, none beyond 23: 80% observed at
        # hour 0 (the MCAR rate), fewer at the last hours.
        self.assertAlmostEqual(cells.loc[("hr", 0), "observed"], 0.8, delta=0.06)  # 3 SE of 400 draws at 0.2
        self.assertLess(cells.loc[("hr", 23), "observed"], 0.2)
        try:
            import matplotlib
        except ImportError:
            return
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ax = e.plot()
        self.assertEqual(ax.get_xlabel(), "time (X's time values)")
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()][:3], ["0", "2", "4"])
        plt.close("all")

    def test_order_blind_model(self):
        for seed in self.SEEDS:
            with self.subTest(seed=seed):
                e, _ = self.explain(order_blind, seed)
                self.assertEqual(e.important, ["hr", "lactate"])
                self.assertEqual([f.name for f in e.features if f.ordering_important], [])
                self.assertEqual([f.name for f in e.features if f.window_ordering_important], [])

    def test_end_aligned_hours_before_discharge(self):
        for seed in self.SEEDS:
            with self.subTest(seed=seed):
                df, rng = patients(seed)
                df["time"] -= df.groupby("instance")["time"].transform("max")  # hours before discharge, <= 0
                X = _input.as_data(df, alignment="end").X
                y = last_hours(X) + rng.normal(scale=0.3, size=X.shape[0])
                e = tempora.explain(last_hours, df, y, task="regression", alignment="end", seed=seed,
                                    progress=False)
                self.assertEqual(e.important, ["hr"])
                self.check_windows(e, {"hr": (18, 23)})  # the last 6 of 24 aligned hours
                self.assertEqual(e.times, list(range(-23, 1)))
                cells = e.to_dataframe("cells").loc["hr"]
                self.assertEqual(list(cells["time"])[-6:], [-5, -4, -3, -2, -1, 0])
                # Given the times since admission instead, the data does
                # not fit alignment="end": an error, not a wrong answer.
                df["time"] -= df.groupby("instance")["time"].transform("min")
                with self.assertRaises(tempora.DataError) as cm:
                    tempora.explain(last_hours, df, y, task="regression", alignment="end", progress=False)
                self.assertEqual((cm.exception.kind, cm.exception.argument), ("alignment", "X"))
                self.assertIn("the times of X line up the sequences' starts", str(cm.exception))

    def test_null(self):
        """Targets independent of the data: the DataFrame path adds no
        discoveries. TIME's own calibration on irregular data is the Go
        side's (decision 19); this checks that nothing between the table
        and the program breaks it. Each trial discovers something with
        probability at most about alpha = 0.1 (decision 19 measured
        0.064 to 0.078 on such data); over 12 trials, 5 or more has
        probability 0.026 under Binomial(12, 0.1)."""
        hits = 0
        for seed in range(12):
            df, rng = patients(100 + seed, n=150)
            y = rng.normal(size=150)
            e = tempora.explain(order_blind, df, y, task="regression", seed=seed, progress=False)
            hits += bool(e.important)
        self.assertLessEqual(hits, 4)


@need_pandas
class ModelNaNTest(unittest.TestCase):
    def test_nan_prediction_names_the_instance_and_the_usual_cause(self):
        """A NumPy model whose np.nanmean meets a slice with nothing
        observed predicts NaN: a ModelError naming the DataFrame's
        instance id and the usual cause."""
        import warnings
        df, rng = patients(0, n=60)
        measured = set(df[(df["feature"] == "hr") & (df["time"] == 2)]["instance"])
        lacking = sorted(set(df["instance"]) - measured)  # no hr at hour 2: naive predicts NaN
        self.assertGreater(len(lacking), 0)

        def naive(x):
            return np.nanmean(x[:, 1, 2:3], axis=1)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Mean of empty slice"
            with self.assertRaises(tempora.ModelError) as ctx:
                tempora.explain(naive, df, rng.normal(size=60), task="regression", progress=False)
        e = ctx.exception
        self.assertEqual((e.kind, e.info["value"]), ("prediction", "NaN"))
        # The program names the instance by its position in the data it
        # read; the package, by the DataFrame's id.
        self.assertEqual(e.info["instance"], sorted(df["instance"].unique()).index(lacking[0]))
        self.assertIn("instance %d is X's instance %r" % (e.info["instance"], lacking[0]), str(e))
        self.assertIn("np.nanmean of an all-NaN slice is NaN", str(e))


class AsArrayTest(unittest.TestCase):
    def test_as_explain_reads_it(self):
        seqs = sequences()
        np.testing.assert_array_equal(tempora.as_array(seqs, alignment="end"),
                                      _input.as_data(seqs, alignment="end").X)
        nld = [s.T for s in seqs]
        np.testing.assert_array_equal(tempora.as_array(nld, layout="nld"),
                                      _input.as_data(seqs).X.transpose(0, 2, 1))  # the layout predict receives
        with self.assertRaisesRegex(ValueError, r"^alignment must be"):
            tempora.as_array(seqs, alignment="late")

    @need_pandas
    def test_dataframe(self):
        df, _ = patients(0, n=20)
        X = tempora.as_array(df)
        self.assertEqual(X.shape, (20, 5, 24))
        np.testing.assert_array_equal(X, _input.as_data(df).X)


class AlignmentFitTest(unittest.TestCase):
    def test_padding_at_the_other_end(self):
        X = np.ones((10, 2, 6))
        for i in range(10):
            X[i, :, 3 + i % 3:] = nan  # start-aligned: padding at the end
        tempora.as_array(X)
        e = refused(self, X, alignment="end")
        self.assertEqual((e.kind, e.argument, e.count, e.lengths), ("alignment", "X", 10, (3, 5)))
        self.assertIn("10 of 10 end before the last (lengths 3 to 5)", str(e))
        X = X[:, :, ::-1]  # end-aligned: padding at the start
        tempora.as_array(X, alignment="end")
        e = refused(self, X)
        self.assertEqual((e.kind, e.count, e.lengths, e.info["alignment"]), ("alignment", 10, (3, 5), "start"))
        self.assertIn("Pass alignment='end'", str(e))

    def test_gaps_alone_do_not_trigger_it(self):
        """Equal lengths with cells missing at random, even a whole last
        step missing in a few instances, fit either alignment."""
        rng = np.random.default_rng(3)
        X = rng.normal(size=(50, 1, 8))
        X[rng.random(X.shape) < 0.3] = nan
        X[:, :, 0] = 1.0
        X[:, :, -1] = 1.0
        X[:20, :, -1] = nan  # 40% end early, fewer than half
        X[:20, :, 0] = nan
        tempora.as_array(X, alignment="end")
        tempora.as_array(X, alignment="start")


@need_pandas
class ReadmeTest(unittest.TestCase):
    def test_readme_irregular_example(self):
        """The example of irregular data in docs/python.md (a long pandas
        table, end-aligned) runs as printed and prints what its comment
        says."""
        import contextlib
        import io
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md"),
                  encoding="utf-8") as f:
            text = f.read()
        start = text.index("```python\nimport pandas as pd\nrows = ")
        code = text[start + len("```python\n"):text.index("```", start + 3)]
        scope = {"np": np, "tempora": tempora, "rng": np.random.default_rng(1)}
        call = 'alignment="end")'
        self.assertEqual(code.count(call), 1)
        code = code.replace(call, 'alignment="end", seed=1, progress=False)')
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, scope)
        e = scope["e"]
        self.assertEqual(e.alignment, "end")
        self.assertEqual(out.getvalue(), "['hr'] (18, 23)\n")
        self.assertEqual(e.times[18:], [-5, -4, -3, -2, -1, 0])


class ExplanationAlignmentTest(unittest.TestCase):
    def doc(self, alignment=None):
        d = {"method": "TIME", "num_features": 1, "num_timesteps": 3, "cells": [[0.0, 0.5, 1.0]],
             "features": [{"index": 0, "name": "hr", "tested": True, "important": True, "score": 1.0,
                           "window": [1, 2]}],
             "accounting": {"model_calls": 1, "instance_evaluations": 1}}
        if alignment is not None:
            d["alignment"] = alignment
        return d

    def test_alignment(self):
        self.assertEqual(Explanation(self.doc()).alignment, "start")
        e = Explanation(self.doc("end"))
        self.assertEqual(e.alignment, "end")
        self.assertEqual(Explanation.from_json(e.to_json()).alignment, "end")
        self.assertIn("end-aligned", e._repr_html_())

    def test_data_summary(self):
        """The data summary is read from the JSON; a document without it
        (complete data, or a program older than the summary) gives None."""
        e = Explanation(self.doc())
        self.assertIsNone(e.lengths)
        self.assertIsNone(e.missing_rate)
        self.assertIsNone(e.observed)
        d = self.doc("end")
        d.update(lengths=[3, 2], missing_rate=[0.2], observed=[[0.5, 1.0, 1.0]])
        e = Explanation(d)
        np.testing.assert_array_equal(e.lengths, np.array([3, 2], dtype=np.int64))
        np.testing.assert_array_equal(e.missing_rate, [0.2])
        self.assertEqual(e.observed.shape, (1, 3))
        np.testing.assert_array_equal(e.observed, [[0.5, 1.0, 1.0]])

    @need_pandas
    def test_cells_frame(self):
        cells = Explanation(self.doc("end")).to_dataframe("cells")
        self.assertEqual(list(cells["steps_before_end"]), [2, 1, 0])
        self.assertNotIn("steps_before_end", Explanation(self.doc()).to_dataframe("cells").columns)


if __name__ == "__main__":
    unittest.main()
