"""DataFrames with the user's own column names (issue 32, item 2): the
keywords that name a frame's instance, time, feature and value columns
(instance_col=, time_col=, feature_col=, value_col=; timeshap's
entity_col=), one feature order for long and wide frames (sorted by name;
feature_names= states another), and time labels in the order of time
("10h" after "2h"), or a warning where text cannot be ordered reliably."""

import importlib.util
import os
import unittest
import warnings

import numpy as np

import tempora
from tempora import _input, _outputs

HAVE_PANDAS = importlib.util.find_spec("pandas") is not None
CI = os.environ.get("CI") == "true"
COLUMNS = dict(instance_col="stay", time_col="hour", feature_col="signal", value_col="value")
SIGNALS = ["hr", "bp", "spo2"]  # in the order a model was trained on (not sorted)
HOURS = ["%dh" % h for h in range(12)]


def need_pandas(f):
    if HAVE_PANDAS or CI:
        return f
    return unittest.skip("pandas is not installed")(f)


def stays(n=300, seed=0, gap=0.0):
    """A long frame as a hospital exports it: columns stay, hour, signal,
    value, hours as text ("0h" to "11h"), rows shuffled, a share gap of
    the measurements left out; and a generator for noise."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    rows = [("s%03d" % i, h, f, rng.normal()) for i in range(n) for h in HOURS for f in SIGNALS
            if rng.random() >= gap]
    df = pd.DataFrame(rows, columns=["stay", "hour", "signal", "value"])
    return df.sample(frac=1, random_state=seed).reset_index(drop=True), rng


def late_hr(x):
    """Reads hr (feature 1 of the sorted bp, hr, spo2) over hours 8h to 11h."""
    return x[:, 1, 8:].mean(axis=1)


@need_pandas
class NamedColumnsTest(unittest.TestCase):
    def test_one_call(self):
        """A frame with columns stay, hour, signal, value is explained in
        one call, its targets a frame keyed by stay; the window is found
        in the frame's own hours, "8h" to "11h" (text sorted as text
        would have put "10h" and "11h" after "1h")."""
        df, rng = stays()
        X = tempora.as_array(df, **COLUMNS)
        self.assertEqual(X.shape, (300, 3, 12))
        y = df[["stay"]].drop_duplicates().sort_values("stay")
        y = y.assign(risk=late_hr(X) + rng.normal(scale=0.2, size=300)).sample(frac=1, random_state=1)
        e = tempora.explain(late_hr, df, y, task="regression", seed=1, progress=False, **COLUMNS)
        self.assertEqual([f.name for f in e.features], ["bp", "hr", "spo2"])
        self.assertEqual(e.important, ["hr"])
        self.assertEqual(e.times, HOURS)
        found = [w.window for w in e.feature("hr").windows if w.significant]
        self.assertTrue(found)
        for lo, hi in found:
            self.assertTrue(8 <= lo <= hi <= 11, found)
        cells = e.to_dataframe("cells").loc["hr"]
        self.assertEqual(list(cells["time"]), HOURS)

    def test_same_as_default_names(self):
        df, _ = stays(n=20, gap=0.2)
        default = df.rename(columns={"stay": "instance", "hour": "time", "signal": "feature"})
        want = _input.as_data(default)
        for kw in (COLUMNS, dict(COLUMNS, value_col=None), dict(entity_col="stay", time_col="hour",
                                                                   feature_col="signal")):
            with self.subTest(kw=kw):
                got = _input.as_data(df, columns=_input.frame_columns(**kw))
                np.testing.assert_array_equal(got.X, want.X)
                self.assertEqual((got.names, got.instances, got.times), (want.names, want.instances, want.times))
                np.testing.assert_array_equal(tempora.as_array(df, **kw), want.X)
        # The instance and time columns may be the row index's levels.
        got = tempora.as_array(df.set_index(["stay", "hour"]), **COLUMNS)
        np.testing.assert_array_equal(got, want.X)
        indexed = df.rename(columns={"stay": "instance", "hour": "time"}).set_index(["instance", "time"])
        np.testing.assert_array_equal(tempora.as_array(indexed, feature_col="signal"), want.X)
        # One column per feature, with named instance and time columns.
        wide = df.pivot(index=["stay", "hour"], columns="signal", values="value").reset_index()
        got = tempora.as_array(wide, instance_col="stay", time_col="hour")
        np.testing.assert_array_equal(got, want.X)

    def test_targets_keyed_by_the_named_instance_column(self):
        import pandas as pd
        df, _ = stays(n=4)
        data = _input.as_data(df, columns=_input.frame_columns(**COLUMNS))
        ids = data.instances
        # One target per stay, in a frame with a stay column, any order.
        one = pd.DataFrame({"stay": ids[::-1], "label": [3.0, 2.0, 1.0, 0.0]})
        got, spec = _outputs.targets(one, "regression", data, None, None, None, None, late_hr)
        self.assertIsNone(spec)
        np.testing.assert_array_equal(got, [0.0, 1.0, 2.0, 3.0])
        # Long targets: (stay, output, value), a missing row no target.
        rows = [(i, h, 10.0 * n + h) for n, i in enumerate(ids) for h in (1, 2) if (n, h) != (2, 2)]
        long = pd.DataFrame(rows, columns=["stay", "output", "value"]).sample(frac=1, random_state=0)
        ya, spec = _outputs.targets(long, "regression", data, None, "horizons", None, None, late_hr)
        want = np.array([[10.0 * n + h for h in (1, 2)] for n in range(4)])
        want[2, 1] = np.nan
        np.testing.assert_array_equal(ya, want)
        self.assertEqual(spec.names, ["1", "2"])
        # value_col names the long targets' value column too.
        renamed = _input.as_data(df.rename(columns={"value": "reading"}),
                                 columns=_input.frame_columns(**dict(COLUMNS, value_col="reading")))
        ya, _ = _outputs.targets(long.rename(columns={"value": "reading"}), "regression", renamed, None, "horizons",
                                 None, None, late_hr)
        np.testing.assert_array_equal(ya, want)
        with self.assertRaisesRegex(ValueError, r"y: the DataFrame has no row for the instances \['s000'\]"):
            _outputs.targets(one.iloc[:-1], "regression", data, None, None, None, None, late_hr)

    def test_errors(self):
        df, _ = stays(n=3)
        cols = r"\['stay', 'hour', 'signal', 'value'\]"
        for kw, msg in [
            (dict(COLUMNS, instance_col="patient"), r"^instance_col='patient' is not a column of X; its columns are "
             + cols),
            (dict(COLUMNS, time_col="hours"), r"^time_col='hours' is not a column of X"),
            (dict(COLUMNS, feature_col="feature"), r"^feature_col='feature' is not a column of X"),
            (dict(COLUMNS, value_col="val"), r"^value_col='val' is not a column of X"),
            (dict(instance_col="stay", time_col="hour", feature_col="signal", entity_col="patient"),
             r"^instance_col='stay' and entity_col='patient' name the same column"),
            (dict(instance_col="stay", time_col="stay"), r"^instance_col='stay' and time_col='stay' name the same"),
        ]:
            with self.subTest(kw=kw):
                with self.assertRaisesRegex(ValueError, msg):
                    tempora.as_array(df, **kw)
        with self.assertRaisesRegex(ValueError, r"^feature_col='signal': X has no column 'value' for the long "
                                                r"DataFrame's values; name it with value_col="):
            tempora.as_array(df.rename(columns={"value": "reading"}), instance_col="stay", time_col="hour",
                             feature_col="signal")
        with self.assertRaisesRegex(ValueError, r"^X: a DataFrame must be wide .*instance_col=, time_col=, "
                                                r"feature_col= and value_col= name others\); got columns " + cols):
            tempora.as_array(df)
        with self.assertRaisesRegex(ValueError, r"^instance_col='stay' is not a column of X nor a level of its "
                                                r"index \['patient'\]; its columns are \['hour', 'signal', 'value'\]"):
            tempora.as_array(df.rename(columns={"stay": "patient"}).set_index(["patient", "hour"]), **COLUMNS)
        with self.assertRaisesRegex(ValueError, r"^instance_col=, time_col=, feature_col= and value_col= name the "
                                                r"columns of a DataFrame X; X is a ndarray"):
            tempora.as_array(np.zeros((2, 1, 3)), instance_col="stay")
        with self.assertRaisesRegex(TypeError, r"^feature_col must be a column name of X; got list"):
            tempora.as_array(df, instance_col="stay", time_col="hour", feature_col=["signal"])

        def never(batch):
            raise AssertionError("predict called on a misnamed column")

        with self.assertRaisesRegex(ValueError, r"^time_col='time' is not a column of X"):
            tempora.explain(never, df, [0.0, 1.0, 2.0], task="regression", instance_col="stay", time_col="time",
                            feature_col="signal", progress=False)


@need_pandas
class FeatureOrderTest(unittest.TestCase):
    """One rule for both forms: features in the sorted order of their
    names, whatever the order of a wide frame's columns or a long frame's
    rows; feature_names= states another."""

    def frames(self):
        df, rng = stays(n=60, gap=0.1)
        wide = df.pivot(index=["stay", "hour"], columns="signal", values="value")[SIGNALS]  # hr, bp, spo2
        return wide, df, rng

    def test_long_and_wide_give_the_same_arrays(self):
        wide, long, _ = self.frames()
        with self.assertWarnsRegex(UserWarning, r"^X: tempora takes a DataFrame's features in the sorted order of "
                                                r"their names, wide or long, so the model receives \['bp', 'hr', "
                                                r"'spo2'\], not the column order \['hr', 'bp', 'spo2'\]; if it "
                                                r"expects the column order, pass feature_names="):
            from_wide = _input.as_data(wide)
        from_long = _input.as_data(long, columns=_input.frame_columns(**COLUMNS))
        self.assertEqual(from_wide.names, ["bp", "hr", "spo2"])
        self.assertEqual(from_long.names, from_wide.names)
        np.testing.assert_array_equal(from_long.X, from_wide.X)
        # A model trained on the wide frame's column order states it, and
        # receives it from either form.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a = _input.as_data(wide, feature_names=SIGNALS)
            b = _input.as_data(long, feature_names=SIGNALS, columns=_input.frame_columns(**COLUMNS))
            # Rows of a long frame in any order, or left out, change nothing.
            c = _input.as_data(long.iloc[::-1], columns=_input.frame_columns(**COLUMNS))
            d = _input.as_data(wide[sorted(SIGNALS)])  # sorted columns: no warning
        np.testing.assert_array_equal(a.X, b.X)
        np.testing.assert_array_equal(a.X[:, 0], wide.unstack("hour")["hr"].loc[a.instances, a.times])
        np.testing.assert_array_equal(c.X, from_long.X)
        np.testing.assert_array_equal(d.X, from_wide.X)

    def test_model_receives_the_same_batches(self):
        """A model trained on the wide frame's order (hr first) gets the
        same batches from the wide and the long form when explained."""
        wide, long, rng = self.frames()
        ids = sorted(long["stay"].unique())
        seen = {}

        def model(key):
            def predict(batch):
                seen.setdefault(key, []).append(np.array(batch))
                return np.nanmean(batch[:, 0, 8:], axis=1)  # hr, the first of the model's features
            return predict

        y = np.nan_to_num(model("y")(_input.as_data(wide, feature_names=SIGNALS).X)) + rng.normal(scale=0.2, size=len(ids))
        e_wide = tempora.explain(model("wide"), wide, y, task="regression", feature_names=SIGNALS, seed=2,
                                 progress=False, workers=1)
        e_long = tempora.explain(model("long"), long, y, task="regression", feature_names=SIGNALS, seed=2,
                                 progress=False, workers=1, **COLUMNS)
        self.assertEqual(len(seen["wide"]), len(seen["long"]))
        for a, b in zip(seen["wide"], seen["long"]):
            np.testing.assert_array_equal(a, b)
        self.assertEqual(e_wide.important, e_long.important)
        self.assertIn("hr", e_long.important)


@need_pandas
class TimeOrderTest(unittest.TestCase):
    def times(self, labels, **kw):
        """The time axis of a long frame with these time labels."""
        import pandas as pd
        df = pd.DataFrame({"instance": 0, "time": labels, "feature": "x", "value": np.arange(len(labels), dtype=float)})
        d = _input.as_data(df.iloc[::-1], **kw)
        # Each label's value lands at its own timestep.
        np.testing.assert_array_equal(d.X[0, 0], [labels.index(t) for t in d.times])
        return d.times

    def test_numeric_text_sorts_as_numbers(self):
        import pandas as pd
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # none of these is ambiguous
            self.assertEqual(self.times(["1h", "10h", "2h"]), ["1h", "2h", "10h"])
            self.assertEqual(self.times(["1", "10", "2", "-3"]), ["-3", "1", "2", "10"])
            self.assertEqual(self.times(["t1.5", "t10", "t2"]), ["t1.5", "t2", "t10"])
            self.assertEqual(self.times(["day 3", "day 12"]), ["day 3", "day 12"])
            self.assertEqual(self.times([10, 2, 1]), [1, 2, 10])
            stamps = list(pd.to_datetime(["2024-01-10", "2024-01-02", "2024-01-01"]))
            self.assertEqual(self.times(stamps), sorted(stamps))
            # A categorical: its categories when ordered, else its labels'
            # own order (pandas puts "10h" before "2h" in the categories).
            ordered = pd.Categorical(["late", "early", "mid"], categories=["early", "mid", "late"], ordered=True)
            df = pd.DataFrame({"instance": 0, "time": ordered, "feature": "x", "value": [0.0, 1, 2]})
            self.assertEqual(_input.as_data(df).times, ["early", "mid", "late"])
            df = df.assign(time=pd.Categorical(["10h", "1h", "2h"]))
            self.assertEqual(_input.as_data(df).times, ["1h", "2h", "10h"])
            # A wide frame's time level, too.
            idx = pd.MultiIndex.from_tuples([(0, "10h"), (0, "2h")], names=["instance", "time"])
            self.assertEqual(_input.as_data(pd.DataFrame({"x": [1.0, 2]}, index=idx)).times, ["2h", "10h"])

    def test_ambiguous_text_warns(self):
        for labels, want in [(["30m", "1h", "2h"], ["1h", "2h", "30m"]),
                             (["morning", "evening", "night"], ["evening", "morning", "night"]),
                             (["2024-01-10", "2024-01-02"], ["2024-01-02", "2024-01-10"])]:
            with self.subTest(labels=labels):
                with self.assertWarnsRegex(UserWarning, r"^X: the time labels of the time column are text that "
                                                        r"cannot be ordered reliably .*give the times as numbers or "
                                                        r"datetimes, or as an ordered pandas Categorical"):
                    self.assertEqual(self.times(labels), want)
        with self.assertWarnsRegex(UserWarning, r"types that do not compare"):
            self.assertEqual(self.times([1, "2h"]), [1, "2h"])


if __name__ == "__main__":
    unittest.main()
