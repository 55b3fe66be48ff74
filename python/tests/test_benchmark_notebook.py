"""Executes examples/notebooks/benchmark.ipynb (the benchmark of a Python
method, and of integrated gradients on the problems' PyTorch modules,
against TIME and LIME) with nbclient, so that it stays runnable. Skipped,
saying so, without Debian's python3-nbclient, python3-ipykernel,
python3-pandas, python3-matplotlib or python3-torch (under CI a missing
package fails)."""

import os
import re
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(HERE, "..", "..", "examples", "notebooks", "benchmark.ipynb")


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
        self.assertGreaterEqual(len(images), 2, "the figures were not drawn")


if __name__ == "__main__":
    unittest.main()
