"""tempora.Problem: loading a synthetic problem and predicting through
``tempora serve``."""

import json
import os
import re
import stat
import subprocess
import tempfile
import time
import unittest

import numpy as np

import tempora
from tempora import _files

from test_explain import without_runtime


def synth(directory, *args):
    subprocess.run([tempora.find_binary(), "synth", "-out", directory] + list(args),
                   check=True, capture_output=True)


class ProblemTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        # Without noise, a regression problem's targets are its model's
        # predictions, bit for bit.
        cls.exact = os.path.join(cls.tmp.name, "exact")
        synth(cls.exact, "-instances", "120", "-features", "5", "-timesteps", "8", "-task", "regression",
              "-noise", "0", "-seed", "3")
        cls.clf = os.path.join(cls.tmp.name, "clf")
        synth(cls.clf, "-instances", "300", "-features", "6", "-timesteps", "10", "-task", "classification",
              "-noise", "auto", "-seed", "5")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_load(self):
        p = tempora.Problem(self.clf)
        self.assertEqual(p.X.shape, (300, 6, 10))
        self.assertEqual(p.y.shape, (300,))
        self.assertEqual(p.task, "classification")
        self.assertEqual(p.seed, 5)
        self.assertEqual(p.config["features"], 6)
        with open(os.path.join(self.clf, "truth.json")) as f:
            truth = json.load(f)["features"]
        self.assertEqual(p.relevant, [t["name"] for t in truth if t["relevant"]])
        for got, want in zip(p.truth, truth):
            self.assertEqual(got.window, tuple(want["window"]))
            self.assertEqual(got.ordering_important, want["ordering_important"])
        self.assertEqual(p.feature_names, [str(j) for j in range(6)])
        self.assertIn("classification", repr(p))

    def test_predict_through_serve(self):
        with tempora.Problem(self.exact) as p:
            self.assertTrue(np.array_equal(p.predict(p.X), p.y))
            self.assertTrue(np.array_equal(p(p.X[:7]), p.y[:7]))
            proc = p._proc
            self.assertIsNotNone(proc)
            with self.assertRaisesRegex(tempora.TemporaError, "serve"):
                p.predict(np.zeros((2, 4, 8)))  # 4 features, not 5
        self.assertIsNotNone(proc.poll(), "serve still runs after close")
        with self.assertRaises(ValueError):
            tempora.Problem(self.exact).predict(np.zeros((0, 5, 8)))

    def test_python_round_trip_equals_in_process(self):
        # The problem's model served through tempora serve and explained via
        # tempora.explain gives exactly the explanation of the model run
        # inside the program: predictions cross both protocols bit for bit.
        with tempora.Problem(self.clf) as p:
            via_python = tempora.explain(p.predict, p.X, p.y, task=p.task, seed=9, permutations=30)
            direct = p.explain(seed=9, permutations=30)
        # Through the package several draws go in one request, each still
        # one call of the model: the explanations are equal, model calls
        # included (issue 31).
        a, b = json.loads(without_runtime(via_python)), json.loads(without_runtime(direct))
        self.assertEqual(a, b)
        self.assertIn("ground truth", direct.report.lower())

    def test_missing_directory(self):
        with self.assertRaisesRegex(FileNotFoundError, "not a synthetic problem"):
            tempora.Problem(os.path.join(self.tmp.name, "nope"))


class HostileProblemTest(unittest.TestCase):
    """tempora.Problem reads a problem directory by the program's rule
    (docs/bad-input.md, "Files tempora reads and writes"): a named pipe or
    a device where a file should be fails at once, saying what it is
    (issue 33: a truth.json or problem.json linked to /dev/zero grew to
    3.8 GB, a data.npy linked to it said "Cannot load file containing
    pickled data")."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.prob = os.path.join(cls.tmp.name, "p")
        synth(cls.prob, "-instances", "40", "-features", "2", "-timesteps", "4", "-seed", "1")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def replaced(self, name, make, want, error=OSError):
        path = os.path.join(self.prob, name)
        saved = path + ".saved"
        os.rename(path, saved)
        try:
            make(path)
            start = time.monotonic()
            with self.assertRaises(error) as cm:
                tempora.Problem(self.prob)
            self.assertLess(time.monotonic() - start, 1, "%s: took too long" % name)
            self.assertIn(path + ": " + want, str(cm.exception))
        finally:
            os.remove(path)
            os.rename(saved, path)

    def test_devices_and_pipes(self):
        for name in ("truth.json", "problem.json", "data.npy", "targets.npy"):
            with self.subTest(name=name, kind="zero"):
                self.replaced(name, lambda p: os.symlink("/dev/zero", p), "is a character device, not a regular file")
            with self.subTest(name=name, kind="fifo"):
                self.replaced(name, os.mkfifo, "is a named pipe (FIFO), not a regular file")

    def test_too_large_json(self):
        def sparse(p):
            with open(p, "wb") as f:
                f.truncate(_files.JSON_LIMIT + 1)
        self.replaced("truth.json", sparse, "67108865 bytes, more than the 64 MiB a problem's JSON file may have")

    def test_not_npy(self):
        def zeros(p):
            with open(p, "wb") as f:
                f.write(bytes(1000))
        self.replaced("data.npy", zeros, "not a .npy file", ValueError)

    def test_limit_documented(self):
        # The limit is the program's, as docs/bad-input.md states it.
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "bad-input.md"), encoding="utf-8") as f:
            doc = f.read()
        self.assertIn("| a problem's JSON files | %s |" % _files._size(_files.JSON_LIMIT), doc)
        self.assertIn("| problem index | %s |" % _files._size(_files.JSON_LIMIT), doc)

    def test_write_atomic_refuses_devices(self):
        d = os.path.join(self.tmp.name, "w")
        os.mkdir(d)
        fifo, link, plain = os.path.join(d, "fifo"), os.path.join(d, "link"), os.path.join(d, "plain")
        os.mkfifo(fifo)
        os.symlink("/dev/null", link)
        for p, kind in ((fifo, "a named pipe (FIFO)"), (link, "a character device")):
            with self.assertRaisesRegex(OSError, re.escape("write %s: is %s, not a regular file" % (p, kind))):
                _files.write_atomic(p, b"x")
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(os.readlink(link), "/dev/null")
        _files.write_atomic(plain, b"one")
        _files.write_atomic(plain, b"two")
        with open(plain, "rb") as f:
            self.assertEqual(f.read(), b"two")
        self.assertEqual(sorted(os.listdir(d)), ["fifo", "link", "plain"])


if __name__ == "__main__":
    unittest.main()
