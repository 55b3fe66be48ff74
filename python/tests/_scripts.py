"""Scripts run in a Python process of their own, for the tests of what
happens to a whole process (Ctrl-C, a hanging predict)."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def start_running(test, source, *args, **popen_kw):
    """Start source as a Python script with args (the tests' modules on its
    path) and wait until it prints "running". The process (text pipes on
    stdout and stderr) is killed, if still running, and the script removed
    when the test ends."""
    tmp = tempfile.TemporaryDirectory()
    test.addCleanup(tmp.cleanup)
    script = os.path.join(tmp.name, "script.py")
    with open(script, "w") as f:
        f.write(source)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE] + sys.path))
    p = subprocess.Popen([sys.executable, script] + [str(a) for a in args], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen_kw)
    test.addCleanup(_kill, p)
    line = p.stdout.readline()
    test.assertEqual(line.strip(), "running", p.stderr.read() if not line else "")
    return p


def _kill(p):
    if p.poll() is None:
        p.kill()
        p.wait()
