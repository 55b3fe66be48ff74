"""The method table, as the tempora program declares it.

The package keeps no list of methods, parameters or flags of its own: it
runs ``tempora methods -json`` once per program (cached by path, size and
modification time) and derives from its answer the methods explain()
accepts, the keywords each method takes, the flags the caller may pass, and
how each value is written on the command line (by the parameter's kind).
"""

import datetime
import json
import math
import numbers
import os
import subprocess
import threading
from dataclasses import dataclass
from typing import Any, Collection, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from ._binary import StrPath, TemporaError, find_binary

#: The schema of ``tempora methods -json`` this package reads.
SCHEMA = 1


@dataclass(frozen=True)
class Param:
    """One parameter of a method, or one flag of ``tempora explain``.

    name is the flag name (``instances-explained``); keyword the Python
    keyword (``instances_explained``). kind is "int", "float", "bool",
    "duration" (default and quick in seconds) or "string"; quick is the
    default at the benchmark's quick scale (None if it has none); range
    the interval of valid values ("" for any value).
    """

    name: str
    kind: str
    default: Any
    doc: str
    quick: Any = None
    range: str = ""

    @property
    def keyword(self) -> str:
        return self.name.replace("-", "_")

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Param":
        return cls(name=str(d["name"]), kind=str(d["kind"]), default=d.get("default"), doc=str(d.get("doc", "")),
                   quick=d.get("quick"), range=str(d.get("range") or ""))


@dataclass(frozen=True)
class Method:
    """One explanation method of the program.

    source is the method whose run this one reuses (its name, e.g. "TIME"
    for TIME-n), or "" for a method that runs on its own; such a method has
    no params of its own and takes those of its source. tests tells whether
    its explanations carry per-feature tests (p-values, windows, ordering);
    mode is how the benchmark selects from its scores ("top-n" or
    "all-non-zero"); local tells whether it gives per-instance
    attributions (Explanation.attributions; False from a program older
    than them).
    """

    name: str
    doc: str
    source: str
    tests: bool
    mode: str
    params: Tuple[Param, ...]
    local: bool = False

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Method":
        return cls(name=str(d["name"]), doc=str(d.get("doc", "")), source=str(d.get("from") or ""),
                   tests=bool(d.get("tests", False)), mode=str(d.get("mode", "")),
                   params=tuple(Param.from_json(p) for p in d.get("params") or ()),
                   local=bool(d.get("local", False)))


@dataclass(frozen=True)
class MethodTable:
    """The methods of a tempora program and the flags of its ``explain``
    command that are not method parameters (``tempora methods -json``)."""

    methods: Tuple[Method, ...]
    flags: Tuple[Param, ...]

    @classmethod
    def from_json(cls, doc: Union[str, bytes, Mapping[str, Any]]) -> "MethodTable":
        if isinstance(doc, (str, bytes)):
            doc = json.loads(doc)
        if not isinstance(doc, Mapping) or doc.get("schema") != SCHEMA:
            raise TemporaError("tempora methods -json: want schema %d, got %r" % (
                SCHEMA, doc.get("schema") if isinstance(doc, Mapping) else doc))
        return cls(methods=tuple(Method.from_json(m) for m in doc.get("methods") or ()),
                   flags=tuple(Param.from_json(f) for f in doc.get("flags") or ()))

    @property
    def names(self) -> List[str]:
        """The canonical method names, in the program's order."""
        return [m.name for m in self.methods]

    def lookup(self, name: str) -> Method:
        """The method named name, without regard to case; ValueError if
        there is none."""
        for m in self.methods:
            if m.name.lower() == str(name).lower():
                return m
        raise ValueError("unknown method %r (the tempora program has %s)" % (name, ", ".join(self.names)))

    def default_method(self) -> Method:
        """The method ``tempora explain`` runs when none is named (the
        default of its -method flag; else the first method)."""
        f = self.flag("method")
        if f is not None and f.default:
            return self.lookup(str(f.default))
        return self.methods[0]

    def params(self, method: Union[str, Method]) -> Tuple[Param, ...]:
        """The parameters a method takes: its own, or its source's."""
        m = method if isinstance(method, Method) else self.lookup(method)
        if m.source:
            m = self.lookup(m.source)
        return m.params

    def flag(self, name: str) -> Optional[Param]:
        """The explain flag of this name (not a method parameter), or None."""
        for f in self.flags:
            if f.name == name:
                return f
        return None


_cache: Dict[Tuple[str, int, int], MethodTable] = {}
_cache_lock = threading.Lock()


def method_table(binary: Optional[StrPath] = None) -> MethodTable:
    """The method table of the tempora program (found as explain finds it):
    what ``tempora methods -json`` prints, run once per program."""
    exe = find_binary(binary)
    st = os.stat(exe)
    key = (exe, st.st_size, st.st_mtime_ns)
    with _cache_lock:
        table = _cache.get(key)
    if table is not None:
        return table
    r = subprocess.run([exe, "methods", "-json"], stdin=subprocess.DEVNULL, capture_output=True)
    if r.returncode != 0:
        msg = r.stderr.decode("utf-8", "replace").strip().splitlines()
        raise TemporaError("%s methods -json failed (a tempora program older than this package?): %s"
                           % (exe, msg[-1] if msg else "exit status %d" % r.returncode))
    try:
        table = MethodTable.from_json(r.stdout.decode("utf-8"))
    except (ValueError, KeyError, TypeError) as exc:
        raise TemporaError("%s methods -json: unreadable answer: %s" % (exe, exc)) from None
    with _cache_lock:
        _cache[key] = table
    return table


def _seconds_text(ns: int) -> str:
    """A whole number of nanoseconds as Go duration text ("90s", "1500ms")."""
    for unit, size in (("h", 3600 * 10**9), ("m", 60 * 10**9), ("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % size == 0:
            return "%d%s" % (ns // size, unit)
    return "%dns" % ns


def flag_value(p: Param, keyword: str, value: Any, where: str) -> str:
    """value as the command-line text of parameter or flag p; TypeError
    (naming keyword and where it was given) for a value of the wrong type."""
    def wrong(want: str) -> TypeError:
        return TypeError("%s: %s=%r: -%s is a %s parameter, want %s" % (where, keyword, value, p.name, p.kind, want))

    is_bool = isinstance(value, (bool, np.bool_))
    if p.kind == "bool":
        if not is_bool:
            raise wrong("True or False")
        return "true" if value else "false"
    if p.kind == "int":
        if is_bool or not isinstance(value, (numbers.Integral, np.integer)):
            raise wrong("an int")
        return str(int(value))
    if p.kind == "float":
        if is_bool or not isinstance(value, (numbers.Real, np.integer, np.floating)):
            raise wrong("a number")
        if isinstance(value, (numbers.Integral, np.integer)):
            return str(int(value))
        return repr(float(value))
    if p.kind == "duration":
        if isinstance(value, str):
            return value  # Go duration text, e.g. "10m"
        if isinstance(value, datetime.timedelta):
            return _seconds_text(value // datetime.timedelta(microseconds=1) * 1000)
        if is_bool or not isinstance(value, (numbers.Real, np.integer, np.floating)):
            raise wrong("seconds (a number), a datetime.timedelta or Go duration text such as \"90s\"")
        seconds = float(value)
        if not math.isfinite(seconds):
            raise ValueError("%s: %s=%r: want a finite number of seconds" % (where, keyword, value))
        return _seconds_text(round(seconds * 1e9))
    if p.kind == "string":
        if not isinstance(value, (str, os.PathLike)):
            raise wrong("a string")
        return os.fspath(value)
    raise TemporaError("-%s has kind %r, which this package does not know (a newer tempora program?)" % (p.name, p.kind))


def command_flags(table: MethodTable, method: Union[str, Method], options: Mapping[str, Any],
                  fixed: Collection[str], where: str) -> List[str]:
    """Turn keyword options into flags of ``tempora explain -method
    method``: a_b=v becomes -a-b=v (in keyword order); None values are left
    out. A keyword is valid if it is a parameter of the method or a flag of
    explain not among fixed (the flags the caller sets itself); anything
    else is a TypeError naming the keyword, the method and the valid
    keywords. where names the caller in messages ("explain()")."""
    m = method if isinstance(method, Method) else table.lookup(method)
    own = table.params(m)
    valid: Dict[str, Param] = {p.keyword: p for p in own}
    for f in table.flags:
        if f.name not in fixed:
            valid.setdefault(f.keyword, f)
    flags = []
    for key in sorted(options):
        value = options[key]
        if value is None:
            continue
        p = valid.get(key)
        if p is None:
            name = key.replace("_", "-")
            if name in fixed:
                raise TypeError("%s: %s=: the package sets -%s itself" % (where, key, name))
            raise TypeError("%s got an unexpected keyword %r for method %s; valid keywords: %s's parameters %s; "
                            "the program's %s" % (
                                where, key, m.name, m.name, ", ".join(p.keyword for p in own) or "(none)",
                                ", ".join(sorted(k for k, p in valid.items() if p not in own))))
        flags.append("-%s=%s" % (p.name, flag_value(p, key, value, where)))
    return flags
