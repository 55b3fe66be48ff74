"""The installed package: the program its build hook bundles, found with
TEMPORA unset, and python -m tempora."""

import os
import shutil
import subprocess
import sys
import unittest

import tempora
from tempora import _binary


def _env_without_tempora():
    env = dict(os.environ)
    env.pop("TEMPORA", None)
    return env


class InstallTest(unittest.TestCase):
    def test_bundled_binary_found_without_tempora(self):
        # make test-python installs with go on PATH, so the build hook must
        # have bundled the program; elsewhere (no go) there is nothing to find.
        if shutil.which("go") is None and not os.path.exists(_binary.BUNDLED):
            self.skipTest("go was not on PATH: the package holds no program")
        self.assertTrue(os.access(_binary.BUNDLED, os.X_OK), _binary.BUNDLED)
        pkg = os.path.dirname(os.path.abspath(tempora.__file__))
        r = subprocess.run([sys.executable, "-c", "import tempora; print(tempora.find_binary())"],
                           env=_env_without_tempora(), capture_output=True, text=True, cwd=os.path.dirname(pkg))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), os.path.join(pkg, "bin", "tempora"))
        # The explicit choices still win over the bundled program.
        self.assertEqual(tempora.find_binary(sys.executable), os.path.abspath(sys.executable))

    def test_python_m_tempora(self):
        r = subprocess.run([sys.executable, "-m", "tempora", "methods", "-json"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('"schema"', r.stdout)
        r = subprocess.run([sys.executable, "-m", "tempora", "no-such-command"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command", r.stderr)

    def test_missing_program_message(self):
        env = _env_without_tempora()
        env["PATH"] = os.devnull
        code = ("import tempora, tempora._binary as b; b.BUNDLED = '/nonexistent'\n"
                "try:\n    tempora.find_binary()\nexcept tempora.TemporaError as e:\n    print(e)\n")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pip install ./python", r.stdout)
        self.assertNotIn("@latest", r.stdout)


if __name__ == "__main__":
    unittest.main()
