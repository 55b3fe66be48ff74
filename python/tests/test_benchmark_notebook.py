"""Executes examples/notebooks/benchmark.ipynb (the benchmark of a Python
method, and of integrated gradients on the problems' PyTorch modules,
against TIME and LIME; the ranking of TIME, OCC, TimeSHAP and gradient
methods by tempora.faithfulness on a PyTorch model without ground truth)
with nbclient, so that it stays runnable and its claims hold. Skipped,
saying so, without Debian's python3-nbclient, python3-ipykernel,
python3-pandas, python3-matplotlib or python3-torch (under CI a missing
package fails)."""

import json
import math
import os
import re
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(HERE, "..", "..", "examples", "notebooks", "benchmark.ipynb")

# Appended to the notebook by the test: the faithfulness section's table
# and TIME's claimed cells, as JSON, for the assertions below.
REPORT = """import json as _json
print("FAITHFULNESS-JSON", _json.dumps({
    "ranking": ranking.to_dict(orient="index"),
    "claimed": {"cells": int(c.cells.sum()), "size": int(c.cells.size),
                "keep_only": c.keep_only.value, "keep_only_se": c.keep_only.se,
                "removed": c.removed.value, "removed_se": c.removed.se},
    "instances": {name: r.instances for name, r in faith.items()},
    "draws": {name: r.draws for name, r in faith.items()},
    "measure": sorted({r.measure for r in faith.values()}),
    "replacement": sorted({r.replacement for r in faith.values()}),
    "global_measure": g.measure}))
"""

METHODS = ("TIME", "OCC", "TimeSHAP", "gradient \u00d7 input", "integrated gradients")


def missing():
    for name in ("nbclient", "nbformat", "ipykernel", "pandas", "matplotlib", "torch"):
        try:
            __import__(name)
        except ImportError:
            return name
    return None


class BenchmarkNotebookTest(unittest.TestCase):
    def test_runs(self):
        name = missing()
        if name is not None:
            msg = "%s is not installed (apt-get install python3-%s)" % (name, name)
            if os.environ.get("CI") == "true":
                self.fail(msg)
            self.skipTest(msg)
        import nbclient
        import nbformat

        nb = nbformat.read(NOTEBOOK, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(REPORT))
        import tempora

        saved = dict(os.environ)
        os.environ.pop("MPLBACKEND", None)  # the kernel draws inline
        # The kernel may be another Python (the system's kernel spec): it
        # imports the package under test from where this process does.
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(tempora.__file__)))
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [pkg, os.environ.get("PYTHONPATH")]))
        try:
            nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        table = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                 if "text/html" in o.get("data", {})]
        self.assertTrue(any("cell-occlusion" in o["data"]["text/html"] for o in table), "no DataFrame output")
        # Integrated gradients on the problem's module: equal to the
        # program's model, complete up to the quadrature, and benchmarked
        # beside TIME in one table.
        text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
        diff = re.search(r"largest difference from the program's predictions: (\S+)", text)
        self.assertIsNotNone(diff, text)
        self.assertLessEqual(float(diff.group(1)), 1e-9)
        self.assertRegex(text, r"completeness gap: mean \|\.\| 0\.0")
        self.assertTrue(any("integrated-gradients" in o["data"]["text/html"] and "TIME" in o["data"]["text/html"]
                            for o in table), "no table of integrated gradients beside TIME")
        images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if "image/png" in o.get("data", {})]
        self.assertGreaterEqual(len(images), 3, "the figures were not drawn")
        self.check_faithfulness(text)

    def check_faithfulness(self, text):
        """The faithfulness section: the table ranks the four methods (and
        gradient x input beside integrated gradients) and a random
        attribution on the same 50 instances, with finite areas and
        standard errors; every method beats random on both curves by more
        than two paired standard errors (the notebook's printed claim); TIME's
        claimed cells: keeping only them changes the loss by less than a
        tenth of what removing them does, which is more than two standard
        errors above zero (the notebook's closing text)."""
        m = re.search(r"^FAITHFULNESS-JSON (.*)$", text, re.M)
        self.assertIsNotNone(m, text)
        r = json.loads(m.group(1))
        table = r["ranking"]
        self.assertEqual(set(table), set(METHODS) | {"random"})
        self.assertEqual(set(r["instances"].values()), {50})
        self.assertEqual(set(r["draws"].values()), {10})
        self.assertEqual((r["measure"], r["replacement"], r["global_measure"]),
                         (["prediction"], ["permutation"], "loss"))
        for name, row in table.items():
            for col in ("deletion area", "insertion area", "comprehensiveness", "sufficiency"):
                self.assertTrue(math.isfinite(row[col]), (name, col, row))
                self.assertTrue(math.isfinite(row[col + "_se"]) and row[col + "_se"] > 0, (name, col, row))
        areas = [row["deletion area"] for row in table.values()]
        self.assertEqual(list(table), [n for _, n in sorted(zip(areas, table), key=lambda t: -t[0])],
                         "the table is not sorted by deletion area")
        rnd = table["random"]
        for name in METHODS:
            row = table[name]
            self.assertGreater(row["deletion \u2212 random"], 2 * row["deletion \u2212 random_se"], name)
            self.assertLess(row["insertion \u2212 random"], -2 * row["insertion \u2212 random_se"], name)
            # The paired column is the difference of the two areas.
            self.assertAlmostEqual(row["deletion \u2212 random"], row["deletion area"] - rnd["deletion area"],
                                   places=12)
            self.assertAlmostEqual(row["insertion \u2212 random"], row["insertion area"] - rnd["insertion area"],
                                   places=12)
        self.assertIn("by more than 2 paired SEs: 5 of 5", text)
        c = r["claimed"]
        self.assertTrue(0 < c["cells"] < c["size"], c)
        self.assertGreater(c["removed"], 2 * c["removed_se"], c)
        self.assertLess(abs(c["keep_only"]), 0.1 * c["removed"], c)


if __name__ == "__main__":
    unittest.main()
