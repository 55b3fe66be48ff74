"""Details that misled users (issue 32, item 6): score-only methods show
that nothing was tested rather than important=False; NaN in y is not a
class label; the program's errors name the caller's keywords, not the
command line's flags."""

import importlib.util
import json
import unittest

import numpy as np

import tempora
from tempora import _errors

HAVE_PANDAS = importlib.util.find_spec("pandas") is not None
from _need import need  # noqa: E402


def fast(**kw):
    kw.setdefault("seed", 2)
    kw.setdefault("progress", False)
    return kw


def problem(m=150, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3, 5))
    y = (X[:, 0, 2] + X[:, 1, 4] + 0.3 * rng.normal(size=m) > 0).astype(float)
    return X, y


def model(x):
    return 1 / (1 + np.exp(-2 * (x[:, 0, 2] + x[:, 1, 4])))


class ScoreOnlyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.X, cls.y = problem()
        cls.perm = tempora.explain(model, cls.X, cls.y, task="classification", method="PERM", **fast())
        cls.time = tempora.explain(model, cls.X, cls.y, task="classification", **fast())

    def test_features_say_not_tested(self):
        # The program's method table says PERM does not test; its JSON
        # has a score for every feature and nothing tested.
        e = self.perm
        self.assertIs(e.tests, False)
        self.assertIs(tempora.method_table().lookup("PERM").tests, False)
        self.assertGreater(e.feature("1").score, 0)
        for f in e.features:
            self.assertFalse(f.tested)
            self.assertIsNone(f.important)
            self.assertIsNone(f.window_significant)
            self.assertIsNone(f.ordering_important)
            self.assertIsNone(f.window_ordering_important)
        self.assertEqual(e.important, [])
        self.assertIn("important not tested", repr(e))
        # A method that tests: outcomes are booleans.
        t = self.time
        self.assertIs(t.tests, True)
        self.assertEqual(t.important, ["0", "1"])
        self.assertTrue(all(isinstance(f.important, bool) and f.tested for f in t.features))

    def test_from_json_asks_the_method_table(self):
        self.assertIs(tempora.Explanation.from_json(self.perm.to_json()).tests, False)
        self.assertIsNone(tempora.Explanation.from_json(self.perm.to_json()).feature(0).important)
        self.assertIs(tempora.Explanation.from_json(self.time.to_json()).tests, True)
        # Told nothing, the explanation is as its JSON has it.
        bare = tempora.Explanation(self.perm.to_json())
        self.assertIsNone(bare.tests)
        self.assertEqual(json.loads(bare.to_json()), json.loads(self.perm.to_json()))  # the JSON is unchanged

    @need(HAVE_PANDAS, "pandas")
    def test_dataframes_show_na(self):
        df = self.perm.to_dataframe()
        for c in ("important", "window_significant", "ordering_important", "window_ordering_important"):
            self.assertEqual(str(df[c].dtype), "boolean", c)
            self.assertTrue(df[c].isna().all(), c)
        self.assertFalse(df["tested"].any())
        cells = self.perm.to_dataframe("cells")
        self.assertTrue(cells["important"].isna().all())
        # TIME's frames keep plain booleans.
        self.assertEqual(self.time.to_dataframe()["important"].dtype, bool)
        self.assertEqual(self.time.to_dataframe("cells")["important"].dtype, bool)

    def test_html_and_text(self):
        h = self.perm._repr_html_()
        self.assertIn("important: not tested", h)
        self.assertNotIn("<th>important</th>", h)
        self.assertNotIn("important", str(self.perm).split("\n\n", 1)[1])  # the report's table has no such column
        self.assertIn("<th>important</th>", self.time._repr_html_())


class MissingLabelsTest(unittest.TestCase):
    def test_nan_is_not_a_third_label(self):
        X, y = problem()
        y = y.copy()
        y[[5, 9]] = np.nan
        with self.assertRaisesRegex(ValueError, r"y holds 2 missing class labels \(NaN or None; the first at index "
                                                r"\(5,\)\): a missing label is not a class"):
            tempora.explain(model, X, y, task="classification", **fast())
        labels = np.where(y > 0, "yes", "no").astype(object)
        labels[9] = None
        with self.assertRaisesRegex(ValueError, r"1 missing class labels .*index \(9,\)"):
            tempora.explain(model, X, labels, task="classification", **fast())

    @need(HAVE_PANDAS, "pandas")
    def test_named_by_instance(self):
        import pandas as pd
        X, y = problem(m=40)
        ids = ["s%02d" % i for i in range(40)]
        idx = pd.MultiIndex.from_product([ids, range(5)], names=["instance", "time"])
        wide = pd.DataFrame(X.transpose(0, 2, 1).reshape(200, 3), index=idx, columns=["a", "b", "c"])
        ys = pd.Series(np.where(y > 0, "yes", "no"), index=ids, dtype=object)
        ys["s07"] = np.nan
        with self.assertRaisesRegex(ValueError, r"the first at instance 's07'"):
            tempora.explain(model, wide, ys, task="classification", **fast())


class KeywordErrorsTest(unittest.TestCase):
    def test_flags_named_as_keywords(self):
        X, y = problem(m=60)
        for kw, want in ((dict(alpha=1.5), "alpha=1.5: "), (dict(max_batch=-1), "max_batch=-1: "),
                         (dict(permutations=-3), "permutations=-3: ")):
            with self.subTest(kw=kw):
                with self.assertRaises(tempora.TemporaError) as cm:
                    tempora.explain(model, X, y, task="classification", **fast(**kw))
                self.assertIn(want, str(cm.exception))
                self.assertNotIn(" -%s" % next(iter(kw)).replace("_", "-"), str(cm.exception))
                self.assertEqual(cm.exception.info["kind"], "usage")

    def test_keyword_message(self):
        kw = {"max-batch": "max_batch", "max": "max", "alpha": "alpha"}
        self.assertEqual(_errors.keyword_message("explain: -max-batch -1: want 0", kw), "explain: max_batch=-1: want 0")
        self.assertEqual(_errors.keyword_message("-max=2 and -alpha", kw), "max=2 and alpha=")
        # Not a flag: a negative number, a word with a dash, a flag not given.
        self.assertEqual(_errors.keyword_message("got -1 in x-max, -gamma 2", kw), "got -1 in x-max, -gamma 2")


if __name__ == "__main__":
    unittest.main()
