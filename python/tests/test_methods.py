"""The method table read from the program (tempora methods -json), and the
command-line flags the package derives from it."""

import ast
import datetime
import os
import subprocess
import unittest

import numpy as np

import tempora
from tempora import _methods

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "tempora")

# A made-up table (no real method's name or parameters): one parameter of
# every kind, a method made from another, and two flags.
FAKE = {
    "schema": 1,
    "methods": [
        {"name": "Alpha-1", "doc": "a method", "from": "", "tests": True, "mode": "all-non-zero", "params": [
            {"name": "n-draws", "kind": "int", "default": 5, "quick": 2, "range": "[1, inf)", "doc": "draws"},
            {"name": "level", "kind": "float", "default": 0.5, "quick": None, "range": "(0, 1)", "doc": "level"},
            {"name": "fast", "kind": "bool", "default": True, "quick": None, "range": "", "doc": "switch"},
            {"name": "limit", "kind": "duration", "default": 0, "quick": None, "range": "[0, inf)", "doc": "time"},
            {"name": "tree", "kind": "string", "default": "", "quick": None, "range": "", "doc": "file"}]},
        {"name": "Alpha-1-b", "doc": "made from Alpha-1", "from": "Alpha-1", "tests": False, "mode": "top-n",
         "params": []},
        {"name": "Beta", "doc": "another", "from": "", "tests": False, "mode": "top-n", "params": []},
    ],
    "flags": [
        {"name": "rng-seed", "kind": "int", "default": 1, "doc": "seed"},
        {"name": "out", "kind": "string", "default": "", "doc": "output"},
        {"name": "method", "kind": "string", "default": "Beta", "doc": "method"},
    ],
}


class FakeTableTest(unittest.TestCase):
    table = _methods.MethodTable.from_json(FAKE)

    def flags(self, method="alpha-1", fixed=("out", "method"), **options):
        return _methods.command_flags(self.table, method, options, fixed, "f()")

    def test_lookup(self):
        t = self.table
        self.assertEqual(t.names, ["Alpha-1", "Alpha-1-b", "Beta"])
        self.assertEqual(t.lookup("ALPHA-1-B").name, "Alpha-1-b")
        self.assertEqual(t.params("alpha-1-b"), t.params("Alpha-1"))  # made from Alpha-1
        self.assertEqual(t.default_method().name, "Beta")
        self.assertEqual(t.lookup("alpha-1").params[0].keyword, "n_draws")
        with self.assertRaisesRegex(ValueError, "unknown method 'gamma' .*Alpha-1, Alpha-1-b, Beta"):
            t.lookup("gamma")
        with self.assertRaisesRegex(tempora.TemporaError, "schema"):
            _methods.MethodTable.from_json(dict(FAKE, schema=99))

    def test_values_by_kind(self):
        self.assertEqual(self.flags(n_draws=np.int64(7), level=0.25, fast=False, tree="t.json", rng_seed=3),
                         ["-fast=false", "-level=0.25", "-n-draws=7", "-rng-seed=3", "-tree=t.json"])
        self.assertEqual(self.flags(level=1), ["-level=1"])
        self.assertEqual(self.flags(method="alpha-1-b", n_draws=2, level=None), ["-n-draws=2"])
        # Durations: seconds, timedelta or Go text, written exactly.
        for value, text in [(90, "90s"), (1.5, "1500ms"), (0.25e-6, "250ns"), (7200, "2h"), (60, "1m"),
                            (datetime.timedelta(minutes=2, microseconds=3), "120000003us"), ("10m", "10m"),
                            (np.float64(2), "2s"), (0, "0h")]:
            self.assertEqual(self.flags(limit=value), ["-limit=" + text], value)

    def test_bad_keywords_and_values(self):
        with self.assertRaisesRegex(TypeError, r"f\(\) got an unexpected keyword 'n_draws' for method Beta; "
                                               r"valid keywords: Beta's parameters \(none\); the program's rng_seed"):
            self.flags(method="beta", n_draws=1)
        with self.assertRaisesRegex(TypeError, "sets -out itself"):
            self.flags(out="x")
        for kw, want in [(dict(n_draws=2.0), "an int"), (dict(n_draws=True), "an int"), (dict(level="x"), "a number"),
                         (dict(fast=1), "True or False"), (dict(limit=[1]), "seconds"), (dict(tree=3), "a string")]:
            with self.subTest(kw=kw), self.assertRaisesRegex(TypeError, "f\\(\\): .*" + want):
                self.flags(**kw)
        with self.assertRaisesRegex(ValueError, "finite"):
            self.flags(limit=float("inf"))


class ProgramTableTest(unittest.TestCase):
    def test_read_once_from_the_program(self):
        t = tempora.method_table()
        self.assertIs(tempora.method_table(), t)  # cached per program
        self.assertGreater(len(t.methods), 0)
        help_text = subprocess.run([tempora.find_binary(), "explain", "-h"], capture_output=True, text=True).stdout
        for m in t.methods:
            self.assertIn(m.name, help_text)
            self.assertIn(m.mode, ("top-n", "all-non-zero"))
            if m.source:
                self.assertEqual(m.params, ())
                t.lookup(m.source)
            # A method's parameters are described by "tempora methods NAME".
            method_help = subprocess.run([tempora.find_binary(), "methods", m.name], capture_output=True,
                                         text=True).stdout
            for p in t.params(m):
                self.assertIn("  -%s %s (default " % (p.name, p.kind), method_help)
                self.assertIn(p.kind, ("int", "float", "bool", "duration", "string"))

    def test_old_program_is_a_clear_error(self):
        with self.assertRaisesRegex(tempora.TemporaError, "methods -json failed"):
            tempora.method_table("/bin/false")

    def test_package_keeps_no_method_table(self):
        # No string in the package's code names a method or a method
        # parameter of the program: they all come from methods -json.
        t = tempora.method_table()
        methods = {m.name.lower() for m in t.methods}
        # The column names of a long DataFrame (tempora._input) are not
        # method names, though "time" spells one; nor is the output column
        # of long targets (tempora._outputs).
        from tempora import _input, _outputs
        columns = set(_input._TIME_NAMES) | {_outputs.OUTPUT}
        # Nor are the fields of an explanation (its JSON keys and
        # DataFrame columns), though "windows" spells a TIME parameter.
        from tempora import _display, _display_outputs
        fields = set(_display.FEATURE_COLUMNS)
        # ... and of the frames and plot views of several outputs ("output"
        # names the output column, as it names the baselines' parameter).
        fields |= {"output", "lags"} | set(_display_outputs.LAG_COLUMNS) | set(_display_outputs.FUTURE_COLUMNS)
        fields |= set(_display_outputs.VIEWS)
        # ... and of its accounting's draw counts ("tests" also names TIME's
        # choice of tests) and batch size ("batch", as TIME's parameter that
        # sets it).
        fields |= {"test", "tests", "draws", "max_draws", "batch"}
        params = {s for m in t.methods for p in t.params(m) for s in (p.name, p.keyword)}
        for fn in sorted(os.listdir(PACKAGE)):
            if not fn.endswith(".py"):
                continue
            with open(os.path.join(PACKAGE, fn), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                          if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
                          and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                    if fn in ("_input.py", "_outputs.py") and node.value in columns:
                        continue
                    if fn in ("_display.py", "_display_outputs.py", "_explanation.py", "_attributions.py") \
                            and node.value in fields:
                        continue
                    # target= is captum's name of the baselines' output
                    # parameter: explain() names the one it stands for;
                    # output= and TIME's batch= take an int, which
                    # explain() turns into the text the program takes.
                    if fn == "_explain.py" and node.value in ("output", "batch"):
                        continue
                    # The method table's own JSON keys ("tests": whether a
                    # method's explanations carry tests).
                    if fn == "_methods.py" and node.value in ("name", "doc", "from", "tests", "mode", "params"):
                        continue
                    self.assertNotIn(node.value.lower(), methods, "%s:%d" % (fn, node.lineno))
                    self.assertNotIn(node.value, params, "%s:%d" % (fn, node.lineno))


if __name__ == "__main__":
    unittest.main()
