"""A smoke test of python/bench/time_vs_permutation.py at a tiny shape (the
benchmark itself, at 500 x 100 x 200, is not part of the tests)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "bench", "time_vs_permutation.py")


class TimeVsPermutationSmokeTest(unittest.TestCase):
    def test_tiny_shape(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bench.json")
            r = subprocess.run([sys.executable, SCRIPT, "--shape", "60,6,16", "--relevant", "2", "--numpy",
                                "--json", out], capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("TIME / PI", r.stdout)
            with open(out) as f:
                res = json.load(f)
        self.assertEqual(res["shape"], [60, 6, 16])
        self.assertTrue(res["pi"]["implementation"].startswith("NumPy"))
        # 1 baseline + 6 features x 5 repeats.
        self.assertEqual(res["pi"]["predict_calls"], 31)
        t = res["time"]
        # model_calls counts the calls of the user's predict (issue 31):
        # one per draw (draws go several to a request but each is one call)
        # and one for the baseline.
        self.assertGreater(t["draws"], 0)
        self.assertEqual(t["model_calls"], t["predict_calls"])
        self.assertEqual(t["model_calls"], t["draws"] + 1)
        self.assertEqual(t["found"], 2)


if __name__ == "__main__":
    unittest.main()
