"""Ctrl-C (SIGINT) during tempora.explain stops the program and the model
processes: nothing is left behind."""

import os
import signal
import textwrap
import time
import unittest

import tempora

import _scripts

# Explains a slow model (50 ms per batch in every process: the run would take
# a minute) and prints "running" once the program has asked this process for
# a few batches.
SCRIPT = textwrap.dedent("""\
    import functools, sys, tempora, _models
    slow = _models.Slow(0.05)
    calls = []
    def predict(batch):
        calls.append(1)
        if len(calls) == 3:
            print("running", flush=True)
        return slow(batch)
    X = _models.data(200)
    if __name__ == "__main__":
        tempora.explain(predict, X, _models.additive(X), task="regression",
                        model_procs=int(sys.argv[1]), model_factory=functools.partial(_models.Slow, 0.05))
    """)


def descendants(pid):
    """Process ids of every descendant of pid (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def running(pid):
    """Whether pid is a live process (not gone, not a zombie)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] not in (b"Z", b"X")


@unittest.skipUnless(os.path.isdir("/proc/self"), "needs /proc to list processes")
class InterruptTest(unittest.TestCase):
    def interrupt(self, procs, group=False):
        p = _scripts.start_running(self, SCRIPT, procs, start_new_session=group)
        kids = descendants(p.pid)
        exe = os.path.realpath(tempora.find_binary())
        programs = [k for k in kids if os.path.realpath("/proc/%d/exe" % k) == exe]
        self.assertEqual(len(programs), 1, "the tempora program among %s" % kids)
        self.assertGreaterEqual(len(kids), procs, "model processes among %s" % kids)
        start = time.monotonic()
        if group:  # a terminal's Ctrl-C: the whole foreground process group
            os.killpg(p.pid, signal.SIGINT)
        else:  # e.g. a notebook's "interrupt kernel": the Python process alone
            p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        self.assertLess(time.monotonic() - start, 10, "interrupt took too long")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("KeyboardInterrupt", err)
        deadline = time.monotonic() + 5
        while any(running(k) for k in kids) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([k for k in kids if running(k)], [], "processes left behind")

    def test_one_process(self):
        self.interrupt(1)

    def test_model_processes(self):
        self.interrupt(3)

    def test_terminal_ctrl_c(self):
        self.interrupt(2, group=True)


if __name__ == "__main__":
    unittest.main()
