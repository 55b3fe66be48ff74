"""A predict that hangs, or a Ctrl-C during predict, ends tempora.explain
with an exception naming the call and the batch size (issue 24)."""

import datetime
import os
import signal
import textwrap
import threading
import time
import unittest

import tempora
from tempora import _calls
import _models
import _scripts


class SecondsTest(unittest.TestCase):
    def test_durations(self):
        for value, want in [(None, 600.0), (5, 5.0), (0.5, 0.5), ("0", 0.0), ("90s", 90.0), ("10m", 600.0),
                            ("1h30m", 5400.0), ("250ms", 0.25), ("1.5s", 1.5), (datetime.timedelta(minutes=2), 120.0)]:
            self.assertAlmostEqual(_calls.seconds(value), want, msg=repr(value))
        for bad in ["", "10", "ten", "5 s", "1d"]:
            with self.assertRaises(ValueError, msg=repr(bad)):
                _calls.seconds(bad)


class HangTest(unittest.TestCase):
    def test_timeout(self):
        release = threading.Event()
        self.addCleanup(release.set)  # lets the abandoned call end

        def hung(batch):
            release.wait()
            return _models.additive(batch)

        X = _models.data(30)
        start = time.monotonic()
        with self.assertRaises(tempora.ModelTimeoutError) as cm:
            tempora.explain(hung, X, _models.additive(X), task="regression", method="perm", model_timeout=2)
        took = time.monotonic() - start
        msg = str(cm.exception)
        self.assertLess(took, 15, "explain took %.1f s to give up on a 2 s limit" % took)
        self.assertRegex(msg, r"^predict on a batch of \d+ instances \(\d+ × 6 × 10\) did not return within model_timeout=2s")
        self.assertIn("left running in a background thread", msg)
        self.assertIsInstance(cm.exception, tempora.ModelError)

    def test_threads(self):
        seen = set()

        def predict(batch):
            seen.add(threading.current_thread().name)
            return _models.additive(batch)

        X = _models.data(30)
        tempora.explain(predict, X, _models.additive(X), task="regression", method="perm", permutations=5)
        self.assertEqual(seen, {"tempora-predict"})
        seen.clear()
        tempora.explain(predict, X, _models.additive(X), task="regression", method="perm", permutations=5, model_timeout=0)
        self.assertEqual(seen, {threading.current_thread().name})
        self.assertFalse([t for t in threading.enumerate() if t.name == "tempora-predict"], "helper thread left idle")

    def test_errors_unchanged(self):
        X = _models.data(30)
        with self.assertRaises(tempora.ModelError) as cm:
            tempora.explain(_models.failing, X, _models.additive(X), task="regression", method="perm")
        self.assertIsInstance(cm.exception.__cause__, ArithmeticError)


# A predict that never returns, and prints "running" once it is called.
SCRIPT = textwrap.dedent("""\
    import sys, threading, tempora, _models
    def predict(batch):
        print("running", flush=True)
        threading.Event().wait()
    X = _models.data(40)
    if __name__ == "__main__":
        tempora.explain(predict, X, _models.additive(X), task="regression", method="perm",
                        model_timeout=float(sys.argv[1]))
    """)


class InterruptHangTest(unittest.TestCase):
    def run_script(self, timeout, sig):
        p = _scripts.start_running(self, SCRIPT, timeout)
        start = time.monotonic()
        if sig is not None:
            p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        return time.monotonic() - start, p.returncode, err

    def test_ctrl_c(self):
        took, status, err = self.run_script(600, signal.SIGINT)
        self.assertLess(took, 10)
        self.assertNotEqual(status, 0)
        self.assertIn("tempora._calls.ModelInterrupt: KeyboardInterrupt during predict on a batch of", err)

    def test_ctrl_c_no_limit(self):
        took, status, err = self.run_script(0, signal.SIGINT)
        self.assertLess(took, 10)
        self.assertNotEqual(status, 0)
        self.assertIn("tempora._calls.ModelInterrupt: KeyboardInterrupt during predict on a batch of", err)

    def test_timeout_exits(self):
        # The abandoned call is in a daemon thread: the script still ends.
        took, status, err = self.run_script(1, None)
        self.assertLess(took, 15)
        self.assertNotEqual(status, 0)
        self.assertIn("tempora._calls.ModelTimeoutError: predict on a batch of", err)


if __name__ == "__main__":
    unittest.main()
