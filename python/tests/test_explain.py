"""Tests of tempora.explain against the tempora program.

The program is found as tempora.explain finds it: the TEMPORA environment
variable (make test-python sets it to a freshly built bin/tempora) or PATH.
"""

import datetime
import json
import os
import pickle
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

import tempora
import _models

HERE = os.path.dirname(os.path.abspath(__file__))


def setUpModule():
    tempora.find_binary()  # fail every test with a clear message if the program is missing


def without_runtime(e):
    """The explanation's JSON without its only run-dependent field."""
    d = e.to_dict()
    d["accounting"]["runtime_seconds"] = 0
    return json.dumps(d, sort_keys=True)


# The acceptance script: at most 10 lines wrapping a NumPy function of a few
# features. Why it is reliable (fixed seeds; M = 1000; P = 50 permutations,
# alpha = 0.1):
# - The function ignores features 0, 2, 4, 5 and 7, so permuting one of them
#   leaves every prediction bit-identical: the loss equals the baseline,
#   which counts as "not worse", so p = 1 exactly and the feature cannot be
#   important, whatever the seed.
# - Permuting a used feature j raises the mean squared loss by about
#   2 Var(term_j) with a standard error of about
#   sqrt((2 (2 Var)^2 + 8 sigma^2 Var) / M): feature 1 (Var = 4/6),
#   2 * 0.67 = 1.33 +- 0.07; feature 3 (Var = 2.25/3), 1.5 +- 0.07;
#   feature 6 (the max of 10 normals, Var ~ 0.34), 0.69 +- 0.04. A draw that
#   does not raise the loss is a 17-SD event, so all 50 draws raise it and
#   p = 1/51 for each; Benjamini-Hochberg over 8 features adjusts the three
#   to (1/51)(8/3) = 0.052 < 0.1: all three are important.
ACCEPTANCE = textwrap.dedent("""\
    import numpy as np, tempora
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1000, 8, 10))
    def f(x):  # uses features 1, 3 and 6 only
        return 2 * x[:, 1, 4:].mean(1) - 1.5 * x[:, 3, :3].mean(1) + x[:, 6, :].max(1)
    y = f(X) + rng.normal(scale=0.5, size=1000)
    e = tempora.explain(f, X, y, task="regression", seed=1)
    print(",".join(e.important))
    """)


class AcceptanceTest(unittest.TestCase):
    def test_ten_line_script_finds_exactly_the_used_features(self):
        self.assertLessEqual(len(ACCEPTANCE.splitlines()), 10)
        out = subprocess.run([sys.executable, "-c", ACCEPTANCE], capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "1,3,6")


    def test_readmes_show_the_acceptance_script(self):
        # The READMEs' example is the acceptance script (but for its last
        # line, which prints differently), so that it cannot drift.
        body = "\n".join(ACCEPTANCE.splitlines()[:-1])
        for readme in (os.path.join(HERE, "..", "README.md"), os.path.join(HERE, "..", "..", "README.md")):
            with open(readme, encoding="utf-8") as f:
                text = "\n".join(line.split("  #")[0].rstrip() for line in f.read().splitlines())
            self.assertIn("\n".join(l.split("  #")[0].rstrip() for l in body.splitlines()), text, readme)


class ExplainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.X = _models.data(400)
        rng = np.random.default_rng(7)
        cls.y = _models.additive(cls.X) + rng.normal(scale=0.3, size=400)

    def explain(self, **kw):
        # The default P = 50 permutations: with 2 of 6 features used, their
        # p = 1/51 adjusts to 3/51 < 0.1. (P = 20 could not reject: 6/42.)
        kw.setdefault("seed", 3)
        return tempora.explain(_models.additive, self.X, self.y, task="regression", **kw)

    def test_explanation_fields(self):
        calls = []

        def predict(batch):
            calls.append(len(batch))
            return _models.additive(batch)

        e = tempora.explain(predict, self.X, self.y, task="regression", seed=3,
                            feature_names=["a", "b", "c", "d", "e", "f"])
        self.assertEqual(e.method, "TIME")
        self.assertEqual(e.important, ["b", "d"])
        self.assertEqual((e.num_features, e.num_timesteps), (6, 10))
        self.assertEqual(e.cells.shape, (6, 10))
        self.assertFalse(e.cells.flags.writeable)
        b = e.feature("b")
        self.assertIs(b, e.feature(1))
        self.assertEqual((b.index, b.name, b.members), (1, "b", (1,)))
        self.assertTrue(b.important and b.tested)
        self.assertGreater(b.score, 0)
        self.assertLessEqual(b.p_value, b.p_adjusted)
        self.assertIsNotNone(b.window)
        start, end = b.window
        self.assertTrue(0 <= start <= end < 10)
        # An unused feature: p = 1, no window searched.
        a = e.feature("a")
        self.assertFalse(a.important)
        self.assertEqual(a.p_value, 1.0)
        self.assertIsNone(a.window)
        self.assertTrue(np.isnan(a.window_p_value))
        acc = e.accounting
        # model_calls counts the calls of predict (issue 31), though the
        # package's protocol sends several draws of 400 instances in one
        # request; each call is one draw of all 400 instances.
        self.assertGreater(acc.model_calls, 5)
        self.assertEqual(acc.model_calls, len(calls))
        self.assertEqual(set(calls), {400})
        self.assertEqual(acc.instance_evaluations, sum(calls))
        self.assertGreater(acc.runtime_seconds, 0)
        self.assertFalse(acc.incomplete)
        # Sequential tests (the default): the overall tests stop early on
        # the unused features, so they draw less than their caps.
        self.assertEqual([c.test for c in acc.draws][:2], ["overall", "window search"])
        overall = acc.draws[0]
        self.assertEqual(overall.tests, 6)
        self.assertLess(overall.draws, overall.max_draws)
        self.assertGreater(overall.saved, 0)
        self.assertIsInstance(e.warnings, list)
        self.assertIn("important features: 2 of 6", str(e))
        # to_json is the program's JSON format and round-trips.
        doc = json.loads(e.to_json())
        self.assertEqual(doc["features"][0]["p_value"], 1.0)
        self.assertIsNone(doc["features"][0]["window"])
        again = tempora.Explanation.from_json(e.to_json(indent=2))
        self.assertEqual(again.important, e.important)
        self.assertTrue(np.array_equal(again.cells, e.cells))
        with self.assertRaises(KeyError):
            e.feature("z")

    def test_options_reach_the_program(self):
        # Besag–Clifford's sequential tests (family_stop=False): the test of
        # the model's feature runs to its cap, so with P = 9 its p-value is
        # the smallest, 1/10. (The default family rule stops it once its
        # decision is settled.)
        e = self.explain(permutations=9, alpha=0.2, gamma=0.9, workers=1, model_timeout=60, family_stop=False)
        self.assertAlmostEqual(min(f.p_value for f in e.features), 0.1)
        self.assertIn("alpha=0.2", e.report)
        # The paper's fixed tests: every test makes exactly P draws.
        e = self.explain(permutations=9, sequential=False, workers=1)
        self.assertIn("sequential=false", e.report)
        self.assertTrue(all(c.draws == c.max_draws for c in e.accounting.draws))
        self.assertEqual(e.accounting.draws[0].draws, 6 * 9)

    def test_hierarchy(self):
        h = [{"name": "first", "features": [0, 1, 2]}, {"name": "second", "features": [3, 4, 5]}]
        e = self.explain(hierarchy=h)
        self.assertEqual([g.name for g in e.groups if g.index == -1][:2], ["first", "second"])
        self.assertTrue(all(g.important for g in e.groups if g.name in ("first", "second")))
        self.assertEqual(e.important, ["1", "3"])

    def test_method_options_pass_through(self):
        e = self.explain(method="lime", samples=50, instances_explained=5)
        self.assertEqual(e.method, "LIME")
        self.assertEqual(e.important, [])  # no significance tests
        for budget in (30, 29.5, datetime.timedelta(seconds=30), "30s"):
            e = self.explain(method="sage-m", max_permutations=64, max_time=budget)
            self.assertEqual(e.method, "SAGE-m")

    def test_unknown_options_are_type_errors(self):
        # Checked against the program's method table before anything runs:
        # the message names the keyword, the method and the valid keywords.
        with self.assertRaisesRegex(TypeError, r"unexpected keyword 'bogus' for method TIME; .*TIME's parameters .*permutations"):
            self.explain(bogus=1)
        with self.assertRaisesRegex(TypeError, r"unexpected keyword 'gamma' for method LIME; .*LIME's parameters .*samples"):
            self.explain(method="lime", gamma=0.9)
        with self.assertRaisesRegex(TypeError, r"'hierarchy' for method LIME"):
            self.explain(method="lime", hierarchy=[{"name": "g", "features": [0, 1]}])
        with self.assertRaisesRegex(TypeError, r"alpha='0.1': -alpha is a float parameter"):
            self.explain(alpha="0.1")
        with self.assertRaisesRegex(ValueError, "unknown method 'nope'"):
            self.explain(method="nope")

    def test_program_failure_is_an_exception_with_its_message(self):
        with self.assertRaises(tempora.TemporaError) as cm:
            self.explain(alpha=2)
        self.assertNotIsInstance(cm.exception, tempora.ModelError)
        self.assertIn("alpha=2: want a float in (0, 1)", str(cm.exception))  # the keyword, not -alpha
        with self.assertRaisesRegex(tempora.TemporaError, "not an executable"):
            self.explain(binary=os.path.join(HERE, "no-such-tempora"))

    def test_predict_exception_comes_back(self):
        calls = []

        def predict(batch):
            calls.append(len(batch))
            if len(calls) == 3:
                raise ZeroDivisionError("bad batch")
            return _models.additive(batch)

        with self.assertRaises(tempora.ModelError) as cm:
            tempora.explain(predict, self.X, self.y, task="regression")
        self.assertIsInstance(cm.exception.__cause__, ZeroDivisionError)
        self.assertIn("predict raised ZeroDivisionError: bad batch", str(cm.exception))
        self.assertEqual(len(calls), 3)  # the program stopped at the error

    def test_wrong_answer_shape_is_a_model_error(self):
        with self.assertRaisesRegex(tempora.ModelError, r"shape \(400, 2\)"):
            tempora.explain(lambda b: np.zeros((len(b), 2)), self.X, self.y, task="regression")

    def test_bad_arguments(self):
        for kw, exc in [
            (dict(task="ranking"), ValueError),
            (dict(task=None), ValueError),
            (dict(model_procs=0), ValueError),
            (dict(feature_names=["a"]), ValueError),
            (dict(feature_names=["a", "b", "c", "d", "e", "f\n"]), ValueError),
            (dict(data="x.npy"), TypeError),
            (dict(samples=[1, 2]), TypeError),
        ]:
            kw.setdefault("task", "regression")
            with self.subTest(kw=kw), self.assertRaises(exc):
                tempora.explain(_models.additive, self.X, self.y, **kw)
        with self.assertRaises(ValueError):
            tempora.explain(_models.additive, self.X[0], self.y, task="regression")
        with self.assertRaises(ValueError):
            tempora.explain(_models.additive, self.X, self.y[:-1], task="regression")

    def test_inline_batches_give_the_same_explanation(self):
        # A 4 KiB shared buffer holds no 400-instance batch: every batch
        # crosses the socket instead.
        small = self.explain(_shared_bytes=4096)
        self.assertEqual(without_runtime(small), without_runtime(self.explain()))

    def test_temporary_files_are_removed(self):
        with tempfile.TemporaryDirectory() as tmp:
            saved = tempfile.tempdir
            tempfile.tempdir = tmp
            try:
                self.explain()
                with self.assertRaises(tempora.ModelError):
                    tempora.explain(_models.failing, self.X, self.y, task="regression")
            finally:
                tempfile.tempdir = saved
            self.assertEqual(os.listdir(tmp), [])

    def test_classification(self):
        X = _models.data(600, seed=2)
        rng = np.random.default_rng(5)
        y = (rng.random(600) < _models.logistic(X)).astype(float)
        e = tempora.explain(_models.logistic, X, y, task="classification", seed=4)
        self.assertEqual(e.important, ["0", "2"])
        self.assertEqual(e.feature(0).window[1], 9)  # feature 0 matters at the end


class ModelProcsTest(unittest.TestCase):
    """model_procs=N: the same explanation from 1 or N processes."""

    @classmethod
    def setUpClass(cls):
        cls.X = _models.data(300, seed=4)
        cls.y = _models.additive(cls.X) + np.random.default_rng(8).normal(scale=0.3, size=300)
        cls.one = without_runtime(tempora.explain(_models.additive, cls.X, cls.y, task="regression", seed=5, permutations=20))

    def explain(self, predict, **kw):
        return tempora.explain(predict, self.X, self.y, task="regression", seed=5, permutations=20, **kw)

    def test_spawned_predict(self):
        self.assertEqual(without_runtime(self.explain(_models.additive, model_procs=3)), self.one)

    def test_factory(self):
        e = self.explain(None, model_factory=_models.make_additive, model_procs=2)
        self.assertEqual(without_runtime(e), self.one)

    def test_fork_accepts_closures(self):
        scale = 1.0
        e = self.explain(lambda b: scale * _models.additive(b), model_procs=2, mp_context="fork")
        self.assertEqual(without_runtime(e), self.one)

    def test_unpicklable_predict_is_refused_early(self):
        with self.assertRaisesRegex(ValueError, "picklable"):
            self.explain(lambda b: _models.additive(b), model_procs=2)

    def test_error_in_another_process(self):
        # The main process serves additive, the worker a failing model. The
        # program hands calls to idle processes in turn (a FIFO), so the
        # worker gets the second call at the latest.
        with self.assertRaisesRegex(tempora.ModelError, "ArithmeticError: worker model failed"):
            self.explain(_models.additive, model_factory=_models.make_failing, model_procs=2)

    def test_factory_failure(self):
        with self.assertRaisesRegex(tempora.ModelError, "model_factory raised .*Error"):
            self.explain(_models.additive, model_factory=_models.Slow, model_procs=2)


class BuildBackendTest(unittest.TestCase):
    """setuptools builds a pure-Python wheel of the package, offline, with
    the type marker and the version of tempora.__version__, when the Go
    sources are not next to it (the build hook then bundles no program)."""

    def test_wheel(self):
        import shutil
        import zipfile
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "src")
            os.mkdir(src)
            for name in ("pyproject.toml", "setup.py", "README.md"):
                shutil.copy(os.path.join(HERE, "..", name), src)
            shutil.copytree(os.path.join(HERE, "..", "tempora"), os.path.join(src, "tempora"),
                            ignore=shutil.ignore_patterns("__pycache__"))
            r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-index", "--no-build-isolation", "--no-deps",
                                "--disable-pip-version-check", "-w", os.path.join(tmp, "dist"), src],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            name = "tempora-%s-py3-none-any.whl" % tempora.__version__
            self.assertEqual(os.listdir(os.path.join(tmp, "dist")), [name])
            with zipfile.ZipFile(os.path.join(tmp, "dist", name)) as zf:
                names = zf.namelist()
                for module in sorted(os.listdir(os.path.join(src, "tempora"))):
                    self.assertIn("tempora/" + module, names)
                self.assertIn("tempora/py.typed", names)
                meta = zf.read("tempora-%s.dist-info/METADATA" % tempora.__version__).decode()
                self.assertIn("Requires-Dist: numpy", meta)
                self.assertIn("Version: %s\n" % tempora.__version__, meta)
                self.assertFalse([n for n in names if not n.startswith(("tempora/", "tempora-"))], names)


if __name__ == "__main__":
    unittest.main()
