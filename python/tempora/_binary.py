"""Finding and running the tempora program."""

import collections
import json
import os
import shutil
import subprocess
import sys
import threading
from typing import IO, Any, Callable, Deque, Dict, List, Optional, Sequence, Union

#: A path given as a string or an os.PathLike.
StrPath = Union[str, "os.PathLike[str]"]


class TemporaError(RuntimeError):
    """The tempora program failed; the message is its error message.

    info is the program's error object when it reported one (``-errors
    json``; docs/errors.md), else None; kind is its kind ("model",
    "infinite", ...)."""

    def __init__(self, *args: Any, info: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(*args)
        self.info = info

    @property
    def kind(self) -> Optional[str]:
        return None if self.info is None else self.info.get("kind")


class ModelError(TemporaError):
    """The model failed: predict raised an exception (chained as the cause
    when it was raised in this process) or returned a wrong answer."""


#: The program built into the package by its build hook (setup.py), if any.
BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tempora")


def find_binary(binary: Optional[StrPath] = None) -> str:
    """Return the path of the tempora program.

    The program is, in this order: binary if given (a path, or a name
    looked up on PATH); the TEMPORA environment variable; the program built
    into the package when it was installed with Go present (``pip install
    ./python`` from a clone); ``tempora`` on PATH.
    """
    if binary is not None:
        source, name = "binary=", os.fspath(binary)
    elif os.environ.get("TEMPORA"):
        source, name = "TEMPORA", os.environ["TEMPORA"]
    elif os.path.isfile(BUNDLED) and os.access(BUNDLED, os.X_OK):
        return BUNDLED
    else:
        source, name = "PATH", "tempora"
    path = name if os.sep in name else shutil.which(name)
    if path is None or not os.path.isfile(path) or not os.access(path, os.X_OK):
        if source == "PATH":
            raise TemporaError(
                "cannot find the tempora program: the package was installed without it (Go was not on PATH "
                "when pip ran) and there is none on PATH. Install Go and reinstall the package from a clone of "
                "the repository (pip install ./python), or build the program (go install ./cmd/tempora, or "
                "make build for bin/tempora) and put it on PATH, set TEMPORA=/path/to/tempora, or pass binary=")
        raise TemporaError("the tempora program %r (from %s) is not an executable file" % (name, source))
    return os.path.abspath(path)


#: How the program's JSON error line starts (docs/errors.md).
ERROR_LINE = '{"error":'


class StderrTail:
    """Reads a process's standard error on a thread, keeping the last lines
    and optionally copying them to sys.stderr."""

    def __init__(self, stream: IO[bytes], echo: bool = False, keep: int = 40,
                 on_line: Optional[Callable[[str], bool]] = None) -> None:
        """on_line, if given, sees every line first; a line for which it
        returns True is neither kept nor echoed (progress lines). The
        program's JSON error line (``-errors json``) is neither either: it
        becomes error, the error object."""
        self.lines: Deque[str] = collections.deque(maxlen=keep)
        self.error: Optional[Dict[str, Any]] = None
        self._stream, self._echo, self._on_line = stream, echo, on_line
        self._thread = threading.Thread(target=self._run, name="tempora-stderr", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for raw in iter(self._stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith(ERROR_LINE):
                try:
                    self.error = dict(json.loads(line)["error"])
                    continue
                except (ValueError, KeyError, TypeError):
                    pass  # not the program's error object: a line like any other
            if self._on_line is not None and self._on_line(line):
                continue
            self.lines.append(line)
            if self._echo:
                try:
                    sys.stderr.write(line + "\n")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
        self._stream.close()

    def join(self, timeout: float = 5) -> None:
        self._thread.join(timeout)

    def error_message(self, returncode: Optional[int]) -> str:
        """The program's one-line error message (its last "tempora: " line),
        or a description of how it ended."""
        for line in reversed(self.lines):
            if line.startswith("tempora: "):
                return line[len("tempora: "):]
        tail = "; ".join(l for l in list(self.lines)[-3:] if l.strip())
        if returncode is not None and returncode < 0:
            msg = "the tempora program was killed by signal %d" % -returncode
        else:
            msg = "the tempora program failed with exit status %s" % returncode
        return msg + (": " + tail if tail else "")


def run(args: Sequence[str], binary: Optional[StrPath] = None, verbose: bool = False, **popen: Any) -> str:
    """Run the tempora program with args to completion and return its
    standard output; raise TemporaError with its message if it fails."""
    exe = find_binary(binary)
    proc = subprocess.Popen([exe] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **popen)
    assert proc.stdout is not None and proc.stderr is not None
    tail = StderrTail(proc.stderr, echo=verbose)
    try:
        out: bytes = proc.stdout.read()
        proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        proc.stdout.close()
        tail.join()
    if proc.returncode != 0:
        raise TemporaError(tail.error_message(proc.returncode), info=tail.error)
    return out.decode("utf-8", "replace")
