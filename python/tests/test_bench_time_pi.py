"""Tests of python/bench/time_vs_permutation.py (issue 34, item 4): its
yardstick, its figures, their reproducibility by a second run, the LSTM
case at a small shape, and the figures docs/benchmarks.md states, which
must be the committed runs' (python/bench/results/*.json)."""

import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "bench")
SCRIPT = os.path.join(BENCH, "time_vs_permutation.py")
BENCHMARKS_MD = os.path.join(HERE, "..", "..", "docs", "benchmarks.md")

# The CPU figures the script prints, for TIME and for the yardstick.
CPU_FIGURES = ("python_cpu_s", "program_cpu_s", "cpu_s", "predict_cpu_s")

# A second run must reproduce every CPU figure within 20% (issue 34's bar).
# CPU time, not wall time: on the shared 2-core machine the wall time of a
# run varies with the load (1.4x between two runs of the same command at a
# load average of 13), while the CPU a process uses for a fixed amount of
# work moves only with cache and frequency effects. Those are relative to
# the figure plus a constant part (process and thread start-up, the
# scheduler's accounting): figures of a few tens of ms varied by 30% between
# two identical runs, figures of 1 s by 6-11%, and the program's 0.55 s
# became 0.77 s (40%) in one pair of runs at a load average of 12 (its
# worker threads compete with a dozen other processes for two cores). So
# the bar applies to the figures of at least MIN_CPU seconds, and the shape
# is chosen so that TIME's total CPU is above 1 s (TIME_CPU) with room: that
# figure at least is always compared (at 400 x 50 x 120 it was 0.98-1.2 s
# as the VM's speed moved; 600 instances give about 1.5 times that). The yardstick costs about 1/15 of TIME's CPU on this problem, too
# little at any shape this test can afford: its counts, which are exact,
# are compared instead. On the 2-core VM at a load average near 1, five
# single runs gave TIME's Python CPU from 0.79 to 1.01 s (and the NumPy
# model's own CPU inside predict from 0.30 to 0.43 s: the machine's, not
# the script's, variation), so two single runs could differ by more than
# 20% though nothing changed; and the machine's speed drifts over minutes
# (a clean-clone CI run had 0.72 s for three consecutive runs, then 0.93 s
# for the next three; an hour later six runs gave 0.64-0.72 s). The test
# therefore pairs the runs as a paired benchmark does: RUNS pairs of
# consecutive runs, each pair's difference relative to its larger figure,
# and the median over the pairs within REL_TOL: a drift between pairs
# falls on both runs of a pair.
RUNS = 3
REL_TOL = 0.20
MIN_CPU = 0.9
TIME_CPU = 1.0
SHAPE = "600,50,120"


def run(*args, timeout=300):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        r = subprocess.run([sys.executable, SCRIPT, "--json", out] + list(args), capture_output=True, text=True,
                           timeout=timeout)
        if r.returncode != 0:
            raise AssertionError("%s failed:\n%s%s" % (" ".join(args), r.stdout, r.stderr))
        with open(out) as f:
            return json.load(f), r.stdout


def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


class TimeVsPermutationTest(unittest.TestCase):
    def check_figures(self, res, m, d):
        ti, yi, ra = res["time"], res["yardstick"], res["ratio"]
        for k in ("wall_s",) + CPU_FIGURES + ("predict_s", "model_calls", "instance_evaluations"):
            self.assertGreaterEqual(yi[k], 0, k)
            self.assertGreater(ti[k], 0, k)
            if yi[k]:
                self.assertAlmostEqual(ra[k], ti[k] / yi[k], msg=k)
        for fig in (ti, yi):
            self.assertAlmostEqual(fig["cpu_s"], fig["python_cpu_s"] + fig["program_cpu_s"])
            self.assertLessEqual(fig["predict_s"], fig["wall_s"])
        # The yardstick starts no process; TIME's program is a child.
        self.assertEqual(yi["program_cpu_s"], 0)
        # 1 baseline + D features x 5 repeats, each on all M instances.
        self.assertEqual(yi["model_calls"], 1 + d * 5)
        self.assertEqual(yi["instance_evaluations"], m * (1 + d * 5))

    def test_default_yardstick_is_numpy(self):
        res, out = run("--shape", "60,6,16", "--relevant", "2")
        self.assertEqual(res["yardstick_name"], "numpy")
        self.assertIn("NumPy", res["yardstick_label"])
        self.assertIn("yardstick: grouped permutation importance, NumPy", out)
        self.assertIn("TIME / yardstick", out)
        self.assertEqual(res["shape"], [60, 6, 16])
        self.check_figures(res, 60, 6)
        t = res["time"]
        self.assertTrue(t["finished"])
        # model_calls counts the calls of the user's predict (issue 31): one
        # per draw and one for the baseline (the script checks that the
        # explanation's accounting equals what predict saw).
        self.assertEqual(t["model_calls"], t["draws"] + 1)
        self.assertEqual(sum(t["draws_by_test"].values()), t["draws"])
        self.assertEqual(t["found"], 2)
        self.assertEqual(res["yardstick"]["top_relevant"], 2)

    @unittest.skipUnless(importable("sklearn"), "needs scikit-learn (Debian's python3-sklearn)")
    def test_sklearn_yardstick_on_request(self):
        res, out = run("--shape", "60,6,16", "--relevant", "2", "--yardstick", "sklearn", "--no-fixed")
        self.assertEqual(res["yardstick_name"], "sklearn")
        self.assertIn("slower", res["yardstick_label"])
        self.check_figures(res, 60, 6)

    def test_cpu_reproduced_by_a_second_run(self):
        runs = [run("--shape", SHAPE, "--no-fixed")[0] for _ in range(2 * RUNS)]
        self.assertEqual(runs[0]["yardstick_name"], "numpy")
        for r in runs[1:]:
            for who in ("time", "yardstick"):
                for k in ("model_calls", "instance_evaluations"):
                    self.assertEqual(r[who][k], runs[0][who][k], (who, k))
        self.assertGreaterEqual(statistics.median(r["time"]["cpu_s"] for r in runs), TIME_CPU,
                                "the shape is too cheap for the comparison to mean anything")
        pairs = list(zip(runs[0::2], runs[1::2]))
        compared = 0
        for who in ("time", "yardstick"):
            for k in CPU_FIGURES:
                if statistics.median(max(x[who][k], y[who][k]) for x, y in pairs) < MIN_CPU:
                    continue
                compared += 1
                # Each pair's difference relative to its larger figure; the
                # median over the pairs is the bar.
                rel = statistics.median(abs(x[who][k] - y[who][k]) / max(x[who][k], y[who][k]) for x, y in pairs)
                self.assertLessEqual(rel, REL_TOL, "%s %s: pairs %s (loads %s)" % (
                    who, k, [(round(x[who][k], 3), round(y[who][k], 3)) for x, y in pairs],
                    [r["load"] for r in runs]))
        self.assertGreaterEqual(compared, 1, "TIME's total CPU is compared")

    @unittest.skipUnless(importable("torch"), "needs PyTorch (Debian's python3-torch)")
    def test_lstm_case(self):
        res, out = run("--case", "lstm", "--shape", "300,12,24", "--epochs", "3", "--max-time", "3", "--no-fixed",
                       "--windows", "1", "--model-timeout", "0")
        self.assertIn("--windows 1 --model-timeout 0", res["command"])
        self.assertEqual(res["case"], "lstm")
        self.assertEqual(res["relevant"], [2, 6, 10])
        self.assertIn("LSTM 12 -> 32 hidden", res["info"]["model"])
        self.assertIn("1 thread", res["info"]["model"])
        self.assertIn("test_r2", res["info"])
        self.assertIn("fit: R^2", out)
        self.check_figures(res, 300, 12)
        t = res["time"]
        if not t["finished"]:  # stopped by --max-time, and said so
            self.assertIn("stopped at --max-time", out)
            self.assertGreaterEqual(t["wall_s"], 3)


class DocumentedFiguresTest(unittest.TestCase):
    """docs/benchmarks.md states the committed runs' figures, as the script
    prints them with --markdown, and nothing else of them."""

    def test_docs_state_the_committed_runs(self):
        with open(BENCHMARKS_MD, encoding="utf-8") as f:
            doc = f.read()
        files = sorted(glob.glob(os.path.join(BENCH, "results", "*.json")))
        self.assertEqual([os.path.basename(p) for p in files], ["lstm-defaults.json", "lstm-helper-thread.json", "lstm.json", "sum.json"])
        for path in files:
            with open(path) as f:
                res = json.load(f)
            self.assertEqual(res["yardstick_name"], "numpy", path)
            self.assertEqual(res["case"], os.path.basename(path)[:-len(".json")].split("-")[0])
            for k, v in res["ratio"].items():
                if v is not None:
                    self.assertAlmostEqual(v, res["time"][k] / res["yardstick"][k], msg=k)
            r = subprocess.run([sys.executable, SCRIPT, "--markdown", path], capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(r.stdout, doc, "docs/benchmarks.md does not state %s as --markdown prints it" % path)


if __name__ == "__main__":
    unittest.main()
