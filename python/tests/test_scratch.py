"""The temporary directories of a killed process (issue 33): tempora.explain
names its own after its process, and removes those of processes that no
longer run."""

import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

import tempora
from tempora import _explain, _scratch

import _scripts

KILLED = """
import numpy as np, tempora, time
x = np.random.default_rng(0).standard_normal((40, 2, 4))
def predict(b):
    print("running", flush=True)
    time.sleep(600)
tempora.explain(predict, x, x[:, 0, 0], task="regression", progress=False)
"""


class StaleTest(unittest.TestCase):
    def test_killed_process_leaves_nothing_behind(self):
        where = _explain._scratch_dir(1 << 20)
        d = tempfile.gettempdir() if where is None else where
        before = set(os.listdir(d))
        p = _scripts.start_running(self, KILLED)
        mine = [n for n in set(os.listdir(d)) - before if n.startswith("tempora-%d-" % p.pid)]
        self.assertEqual(len(mine), 1, sorted(set(os.listdir(d)) - before))
        p.kill()
        p.wait()
        self.assertTrue(os.path.isdir(os.path.join(d, mine[0])))
        x = np.random.default_rng(1).standard_normal((40, 2, 4))
        tempora.explain(lambda b: b[:, 0, 0], x, x[:, 0, 0], task="regression", progress=False)
        self.assertFalse(os.path.exists(os.path.join(d, mine[0])))

    def test_live_and_foreign_directories_stay(self):
        with tempfile.TemporaryDirectory() as d:
            live = os.path.join(d, "tempora-%d-abc" % os.getpid())
            other = os.path.join(d, "tempora-bench-x")
            dead = os.path.join(d, "tempora-%d-abc" % _dead_pid())
            for p in (live, other, dead):
                os.mkdir(p)
            self.assertEqual(_scratch.remove_stale(d), 1)
            self.assertEqual(sorted(os.listdir(d)), sorted(os.path.basename(p) for p in (live, other)))


def _dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


if __name__ == "__main__":
    unittest.main()
