"""The wheel of make wheel, as a user without Go gets it: a platform wheel
(py3-none-<platform>, not "any") holding a statically linked tempora
program, installed with pip into a fresh virtual environment whose PATH has
no go and no tempora, with TEMPORA unset, then the README's example
explained in one call.

make test-wheel builds the wheel and runs this test with TEMPORA_WHEEL set
to its file; without TEMPORA_WHEEL (make test-python) it is skipped.
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
import unittest
import zipfile

WHEEL = os.environ.get("TEMPORA_WHEEL", "")

# The README's example (README.md, "Python"), run by the installed package.
EXAMPLE = r"""
import json, os, shutil, sys
import numpy as np, tempora
assert shutil.which("go") is None, shutil.which("go")
assert "TEMPORA" not in os.environ
rng = np.random.default_rng(1)
X = rng.normal(size=(1000, 8, 10))     # instances x features x timesteps
def f(x):  # uses features 1, 3 and 6 only
    return 2 * x[:, 1, 4:].mean(1) - 1.5 * x[:, 3, :3].mean(1) + x[:, 6, :].max(1)
y = f(X) + rng.normal(scale=0.5, size=1000)
e = tempora.explain(f, X, y, task="regression", seed=1)
print(json.dumps({"file": tempora.__file__, "binary": tempora.find_binary(), "important": e.important}))
"""


def platform_tag() -> str:
    """This platform's wheel tag, as bdist_wheel writes it (linux_x86_64)."""
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def is_static_elf(data: bytes) -> bool:
    """Whether an ELF executable has no program interpreter (PT_INTERP):
    the kernel runs it without a dynamic loader or C library."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    cls, order = data[4], {1: "<", 2: ">"}[data[5]]
    if cls == 2:  # 64-bit
        phoff, = struct.unpack_from(order + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x36)
    else:
        phoff, = struct.unpack_from(order + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x2A)
    for i in range(phnum):
        p_type, = struct.unpack_from(order + "I", data, phoff + i * phentsize)
        if p_type == 3:  # PT_INTERP
            return False
    return True


def path_without(*programs: str) -> str:
    """PATH without the directories that hold any of programs."""
    keep = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if d and not any(os.access(os.path.join(d, p), os.X_OK) for p in programs):
            keep.append(d)
    return os.pathsep.join(keep)


@unittest.skipUnless(WHEEL, "TEMPORA_WHEEL is not set: make test-wheel builds the wheel and runs this test")
class WheelTest(unittest.TestCase):
    def test_name_and_content(self) -> None:
        name = os.path.basename(WHEEL)
        m = re.fullmatch(r"tempora-([^-]+)-py3-none-([^-]+)\.whl", name)
        self.assertIsNotNone(m, name)
        assert m is not None
        self.assertEqual(m.group(2), platform_tag())
        self.assertNotEqual(m.group(2), "any")
        with zipfile.ZipFile(WHEEL) as z:
            info = z.getinfo("tempora/bin/tempora")
            self.assertTrue((info.external_attr >> 16) & 0o111, "tempora/bin/tempora is not executable")
            wheel_meta = z.read("tempora-%s.dist-info/WHEEL" % m.group(1)).decode()
            self.assertIn("Root-Is-Purelib: false", wheel_meta)
            if sys.platform.startswith("linux"):
                self.assertTrue(is_static_elf(z.read(info)), "tempora/bin/tempora is dynamically linked")

    def test_install_without_go_and_explain(self) -> None:
        path = path_without("go", "tempora")
        self.assertIsNone(shutil.which("go", path=path))
        with tempfile.TemporaryDirectory(prefix="tempora-wheel-") as tmp:
            venv = os.path.join(tmp, "venv")
            # Debian's NumPy through --system-site-packages (no index is
            # reachable); the package itself only from the wheel.
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
            env = {k: v for k, v in os.environ.items() if k not in ("TEMPORA", "PYTHONPATH", "GOROOT", "GOPATH")}
            env["PATH"] = os.path.join(venv, "bin") + os.pathsep + path
            py = os.path.join(venv, "bin", "python")
            r = subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index",
                                "--no-deps", WHEEL], env=env, cwd=tmp, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            r = subprocess.run([py, "-c", EXAMPLE], env=env, cwd=tmp, capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            got = json.loads(r.stdout.strip().splitlines()[-1])
            pkg = os.path.dirname(got["file"])
            self.assertTrue(pkg.startswith(venv + os.sep), got["file"])
            self.assertEqual(got["binary"], os.path.join(pkg, "bin", "tempora"))
            self.assertEqual(got["important"], ["1", "3", "6"])


if __name__ == "__main__":
    unittest.main()
