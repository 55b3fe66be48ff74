"""Sphinx configuration of the Python API reference (make pydoc).

The reference is generated from the docstrings of the package in python/
(imported from the source tree, as it is at build time; the tempora program
is not needed): every name of tempora.__all__, with its members, in
index.rst (the type aliases appended to it here). Sphinx is Debian's python3-sphinx, with its own autodoc
extension and napoleon's numpydoc parser only.

make pydoc builds with -W: a warning fails the build. Besides docutils'
warnings about docstrings that do not parse, this file warns about a name of
tempora.__all__ without documentation of its own. A type alias cannot hold a
docstring: its documentation is the ``#:`` comment above its definition in
the package's module, which is attached here; an alias without one is
missing documentation as well. Public members (methods, properties) of the
public classes without a docstring are listed, as a note that does not fail
the build.

The docstrings are written for help() first. Two of their conventions are
read here as help() shows them, not as reStructuredText would:

- an indented block after a blank line and a paragraph that does not end
  with "::" (an example), or right after a line that ends with a colon
  ("Attributes:"), is a literal block, shown as written (numpydoc's
  underlined sections, "Parameters" and the like, are napoleon's);
- a name with a trailing underscore (scikit-learn's ``classes_``,
  ``n_features_in_``) is a name, not a hyperlink reference.

Everything else in a docstring is reStructuredText, and a docstring that does
not parse fails the build.
"""

import inspect
import os
import re
import sys
from typing import Any, Dict, List, Optional

from sphinx.application import Sphinx
from sphinx.ext.napoleon import Config, NumpyDocstring
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging

HERE = os.path.dirname(os.path.abspath(__file__))
# TEMPORA_APIDOC_SRC names another directory holding a package tempora
# (test_conf.py's fixtures).
sys.path.insert(0, os.path.abspath(os.environ.get("TEMPORA_APIDOC_SRC") or os.path.join(HERE, "..", "..", "python")))

import tempora  # noqa: E402 (from the source tree above)

project = "tempora"
release = tempora.__version__
version = tempora.__version__
extensions = ["sphinx.ext.autodoc"]
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
html_theme = "alabaster"
html_show_sourcelink = False
exclude_patterns: List[str] = []

logger = logging.getLogger("tempora-apidoc")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


_LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")
_SPANS = re.compile(r"(``.*?``|`[^`]*`)")
_TRAILING = re.compile(r"(?<![\w\\])(\w*?[A-Za-z0-9])(_+)(?![\w`])")


def _escape_trailing_underscores(line: str) -> str:
    parts = _SPANS.split(line)
    for i in range(0, len(parts), 2):  # outside of inline literals and interpreted text
        parts[i] = _TRAILING.sub(lambda m: m.group(1) + "\\_" * len(m.group(2)), parts[i])
    return "".join(parts)


def _is_list_paragraph(text: str, line: str) -> bool:
    """Whether line, after a blank line, continues the list item text."""
    m = _LIST_ITEM.match(text)
    return m is not None and _indent(line) == m.end()


def _is_heading(text: str) -> bool:
    """Whether text is a heading of help()'s: a line ending with one
    colon."""
    t = text.strip()
    return t.endswith(":") and not t.endswith("::")


def help_conventions(lines: List[str]) -> List[str]:
    """The docstring lines with help()'s indented blocks as literal blocks
    and trailing underscores escaped (see the file's docstring)."""
    out: List[str] = []
    last: Optional[str] = None  # the last non-blank line of running text
    i = 0
    while i < len(lines):
        line = lines[i]
        after_blank = i > 0 and lines[i - 1].strip() == ""
        starts_block = (line.strip() != "" and last is not None and _indent(line) > _indent(last) and
                        (_is_heading(last) if not after_blank else not _is_list_paragraph(last, line)))
        if starts_block and last is not None:
            base = _indent(last)
            if not after_blank:  # "Heading:" then its block: "Heading::"
                out[-1] += ":"
                out.append("")
            elif not last.rstrip().endswith("::"):
                out.extend([" " * base + "::", ""])
            while i < len(lines) and (lines[i].strip() == "" or _indent(lines[i]) > base):
                out.append(lines[i])
                i += 1
            if i < len(lines) and out[-1].strip() != "":
                out.append("")
            last = None
            continue
        if line.strip():
            last = line
            line = _escape_trailing_underscores(line)
        out.append(line)
        i += 1
    return out


# napoleon reads the numpydoc sections ("Parameters" over a line of dashes)
# of modules, classes and routines. Google-style sections are off:
# "Attributes:" and its block are a heading of help()'s. The docs of data
# and properties are prose, which napoleon would split at their first
# colon as "type: description".
NAPOLEON = Config(napoleon_google_docstring=False, napoleon_numpy_docstring=True)
NUMPYDOC = {"module", "class", "exception", "function", "method"}


def process_docstring(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: List[str]) -> None:
    lines[:] = help_conventions(lines)
    if what in NUMPYDOC:
        lines[:] = NumpyDocstring(lines, NAPOLEON, app, what, name, obj, options).lines()


def _alias_docs() -> Dict[str, List[str]]:
    """The ``#:`` documentation comments of the package's modules, by the
    name they document."""
    docs: Dict[str, List[str]] = {}
    pkg = os.path.dirname(os.path.abspath(tempora.__file__))
    for fname in sorted(os.listdir(pkg)):
        if not fname.endswith(".py") or fname == "__init__.py":
            continue
        analyzer = ModuleAnalyzer.for_module("tempora." + fname[:-3])
        for (namespace, attr), doc in analyzer.find_attr_docs().items():
            if namespace == "":
                docs.setdefault(attr, list(doc))
    return docs


def _own_doc(obj: Any) -> str:
    if inspect.isclass(obj):
        return obj.__dict__.get("__doc__") or ""
    if inspect.isroutine(obj):
        return obj.__doc__ or ""
    return ""


def _members_without_doc(cls: type) -> List[str]:
    missing = []
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(value, property):
            doc = value.fget.__doc__ if value.fget else None
        elif isinstance(value, (classmethod, staticmethod)):
            doc = value.__func__.__doc__
        elif inspect.isfunction(value):
            doc = value.__doc__
        else:
            continue  # a field or constant: documented by its class
        if not doc:
            missing.append("%s.%s" % (cls.__name__, attr))
    return missing


def check_public_api(app: Sphinx) -> None:
    """Attach the aliases' comments; warn about names of tempora.__all__
    without documentation; list undocumented members of public classes."""
    aliases = _alias_docs()
    members: List[str] = []
    for name in tempora.__all__:
        obj = getattr(tempora, name)
        if inspect.isclass(obj) or inspect.isroutine(obj):
            if not _own_doc(obj).strip():
                logger.warning("tempora.%s (in tempora.__all__) has no docstring", name)
            if inspect.isclass(obj):
                members.extend(_members_without_doc(obj))
        elif inspect.ismodule(obj):
            if not (obj.__doc__ or "").strip():
                logger.warning("tempora.%s (in tempora.__all__) is a module without a docstring", name)
            for attr in getattr(obj, "__all__", []):
                value = getattr(obj, attr)
                if (inspect.isclass(value) or inspect.isroutine(value)) and not _own_doc(value).strip():
                    logger.warning("tempora.%s.%s has no docstring", name, attr)
        elif name in aliases:
            obj.__doc__ = "\n".join(aliases[name]).strip() + "\n"
        else:
            logger.warning("tempora.%s (in tempora.__all__) has no documentation: a type alias needs a #: comment "
                           "above its definition", name)
    if members:
        logger.info("note: public members without a docstring: %s", ", ".join(members))


def _aliases() -> List[str]:
    """The names of tempora.__all__ that are neither classes nor routines:
    the type aliases."""
    return [n for n in tempora.__all__ if not (inspect.isclass(getattr(tempora, n)) or
                                               inspect.isroutine(getattr(tempora, n)) or
                                               inspect.ismodule(getattr(tempora, n)))]


def _modules() -> List[str]:
    """The names of tempora.__all__ that are submodules (tempora.gradients)."""
    return [n for n in tempora.__all__ if inspect.ismodule(getattr(tempora, n))]


def add_aliases(app: Sphinx, docname: str, source: List[str]) -> None:
    """Append the type aliases to index.rst: automodule leaves out data
    imported into tempora/__init__.py from the package's modules."""
    if docname != "index":
        return
    modules = _modules()
    if modules:
        source[0] += "\nModules\n-------\n\n" + "".join(".. automodule:: tempora.%s\n   :members:\n\n" % n for n in modules)
    names = _aliases()
    if names:
        source[0] += "\nType aliases\n------------\n\n" + "".join(".. autodata:: tempora.%s\n\n" % n for n in names)


def setup(app: Sphinx) -> Dict[str, Any]:
    app.connect("builder-inited", check_public_api)
    app.connect("source-read", add_aliases)
    app.connect("autodoc-process-docstring", process_docstring)
    return {"parallel_read_safe": True}

