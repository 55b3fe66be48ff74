"""The parameters of a method as a numpydoc "Parameters" section, made from
the method table the tempora program prints (``tempora methods -json``), so
that the documentation of explain's keywords never drifts from the program."""

from typing import Optional

from ._binary import StrPath
from ._methods import Param, method_table

#: The Python types of the parameter kinds, as explain takes them.
PYTHON_TYPES = {
    "int": "int",
    "float": "float",
    "bool": "bool",
    "duration": "float (seconds), datetime.timedelta or str (Go duration text)",
    "string": "str",
}


def _entry(p: Param) -> str:
    default = p.default
    if p.kind == "bool":
        default = bool(default)
    elif p.kind == "string" and default in (None, ""):
        default = '""'
    head = "%s : %s, default %s" % (p.keyword, PYTHON_TYPES.get(p.kind, p.kind), default)
    doc = p.doc[:1].upper() + p.doc[1:] if p.doc else ""
    if p.range:
        doc += " (valid: %s)" % p.range
    if p.quick is not None and p.quick != p.default:
        doc += " (%s at the benchmark's quick scale)" % p.quick
    return "%s\n    %s." % (head, doc.rstrip("."))


def method_doc(method: Optional[str] = None, binary: Optional[StrPath] = None) -> str:
    """The keywords tempora.explain takes for a method, as numpydoc.

    Parameters
    ----------
    method : str, optional
        A method name (without regard to case); by default the program's
        default method, TIME.
    binary : str or path, optional
        The tempora program (default: tempora.find_binary()).

    Returns
    -------
    str
        The method's one-line description and a "Parameters" section with
        each keyword's type, default, valid range and meaning, as the
        program declares them; ``print(tempora.method_doc("LIME"))``.
    """
    table = method_table(binary)
    m = table.lookup(method) if method is not None else table.default_method()
    params = table.params(m)
    lines = ["%s: %s" % (m.name, m.doc), ""]
    if m.source:
        lines += ["%s runs %s and takes its parameters." % (m.name, m.source), ""]
    lines += ["Parameters", "----------"]
    lines += [_entry(p) for p in params] if params else ["(none)"]
    return "\n".join(lines) + "\n"
