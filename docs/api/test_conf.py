"""The API reference's checks (conf.py): help()'s conventions read as
literal blocks and names, and a build that fails on a name of __all__
without documentation or a docstring that does not parse, over small
fixture packages. make pydoc runs it before building the reference."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from conf import help_conventions  # noqa: E402

FIXTURE_INIT = '''\
"""A fixture package.

    import tempora
    tempora.good()
"""
from typing import Union
from ._mod import Alias, Bare

__version__ = "0.0.0"
__all__ = [%s]


def good() -> None:
    """A function.

    Attributes:
        n_features_in_: what the estimator saw, as scikit-learn's classes_.

    Parameters
    ----------
    x : int
        A number.
    """


def nodoc() -> None:
    pass


def broken() -> None:
    """A function with *unbalanced emphasis."""
'''

FIXTURE_MOD = '''\
from typing import Union

#: An alias documented by its comment.
Alias = Union[int, str]

Bare = Union[int, bytes]
'''


def build(names):
    """Build the reference of a fixture package whose __all__ is names:
    (return code, output)."""
    with tempfile.TemporaryDirectory(prefix="tempora-apidoc-") as tmp:
        pkg = os.path.join(tmp, "src", "tempora")
        os.makedirs(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write(FIXTURE_INIT % ", ".join(repr(n) for n in names))
        with open(os.path.join(pkg, "_mod.py"), "w") as f:
            f.write(FIXTURE_MOD)
        env = dict(os.environ, TEMPORA_APIDOC_SRC=os.path.join(tmp, "src"))
        r = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", "-E",
                            "-d", os.path.join(tmp, "doctrees"), HERE, os.path.join(tmp, "html")],
                           env=env, capture_output=True, text=True, timeout=600)
        html = ""
        if r.returncode == 0:
            with open(os.path.join(tmp, "html", "index.html"), encoding="utf-8") as f:
                html = f.read()
        return r.returncode, r.stdout + r.stderr, html


class HelpConventionsTest(unittest.TestCase):
    def test_indented_example_is_literal(self):
        lines = ["Title.", "", "    import tempora", "    x = 1", "", "Text after."]
        self.assertEqual(help_conventions(lines),
                         ["Title.", "", "::", "", "    import tempora", "    x = 1", "", "Text after."])

    def test_heading_block_is_literal(self):
        lines = ["Attributes (None where missing):", "    kind: what", "        more", "", "End."]
        self.assertEqual(help_conventions(lines),
                         ["Attributes (None where missing)::", "", "    kind: what", "        more", "", "End."])

    def test_trailing_underscores_are_names(self):
        self.assertEqual(help_conventions(["the model's classes_ (and ``classes_``), n_features_in_."]),
                         ["the model's classes\\_ (and ``classes_``), n_features_in\\_."])

    def test_list_paragraph_and_literal_marker_kept(self):
        lines = ["- item", "", "  second paragraph", "", "Example::", "", "    code_"]
        self.assertEqual(help_conventions(lines), lines)


class BuildTest(unittest.TestCase):
    def test_documented_names_build(self):
        code, out, html = build(["good", "Alias"])
        self.assertEqual(code, 0, out)
        self.assertIn("An alias documented by its comment.", html)
        self.assertIn("n_features_in_", html)

    def test_missing_docstring_fails(self):
        code, out, _ = build(["good", "nodoc"])
        self.assertNotEqual(code, 0, out)
        self.assertIn("tempora.nodoc (in tempora.__all__) has no docstring", out)

    def test_alias_without_comment_fails(self):
        code, out, _ = build(["good", "Bare"])
        self.assertNotEqual(code, 0, out)
        self.assertIn("tempora.Bare (in tempora.__all__) has no documentation", out)

    def test_broken_docstring_fails(self):
        code, out, _ = build(["good", "broken"])
        self.assertNotEqual(code, 0, out)
        self.assertIn("Inline emphasis start-string without end-string", out)


if __name__ == "__main__":
    unittest.main()
