"""The package's type hints: mypy in strict mode over the package (Debian's
python3-mypy), and every public function and method annotated."""

import inspect
import os
import subprocess
import sys
import unittest

import tempora

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def have_mypy():
    return subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True).returncode == 0


class TypesTest(unittest.TestCase):
    def test_mypy_strict(self):
        # Under CI a missing mypy is an error, not a skip (.ci/run installs
        # python3-mypy).
        if not have_mypy():
            if os.environ.get("CI") == "true":
                self.fail("mypy is not installed (apt-get install python3-mypy)")
            self.skipTest("mypy is not installed (apt-get install python3-mypy)")
        r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", os.path.join(ROOT, "pyproject.toml"),
                            "--cache-dir", os.devnull, os.path.join(ROOT, "tempora")],
                           capture_output=True, text=True, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_public_api_is_annotated(self):
        # Every public function, and every public method of a public class
        # (with __init__), has annotated parameters and return type.
        missing = []

        def check(name, fn):
            sig = inspect.signature(fn)
            for p in sig.parameters.values():
                if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty:
                    missing.append("%s: parameter %s" % (name, p.name))
            if sig.return_annotation is inspect.Signature.empty:
                missing.append("%s: return" % name)

        checked = 0
        for name in tempora.__all__:
            obj = getattr(tempora, name)
            if inspect.isfunction(obj):
                check(name, obj)
                checked += 1
            elif inspect.isclass(obj) and obj.__module__.startswith("tempora"):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    if isinstance(member, (classmethod, staticmethod)):
                        member = member.__func__
                    elif isinstance(member, property):
                        member = member.fget
                    if inspect.isfunction(member):
                        check("%s.%s" % (name, attr), member)
                        checked += 1
        self.assertGreater(checked, 40, checked)
        self.assertEqual(missing, [])


if __name__ == "__main__":
    unittest.main()
