"""Reading the files of problem directories without trusting them, by the
program's rule (docs/bad-input.md, "Files tempora reads and writes"): a
file is opened without blocking and must be a regular file (a symbolic link
to one is followed), so a named pipe, a device, a socket or a directory is
refused at once, saying what it is; a JSON file is read up to JSON_LIMIT
bytes, a .npy file up to its size. write_atomic writes the files the
package puts into problem directories, replacing only regular files."""

import io
import itertools
import json
import os
import stat
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

#: The most bytes read of a problem's JSON file (problem.json, truth.json)
#: or a suite's index.json: the program's limit for them.
JSON_LIMIT = 64 << 20

_NPY_MAGIC = b"\x93NUMPY"


def _kind(mode: int) -> str:
    """What a file of this mode is, as the program says it."""
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return kind
    return "an irregular file"


def _size(n: int) -> str:
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d bytes" % n


def open_regular(path: str) -> BinaryIO:
    """path opened for reading in binary, if it is a regular file; OSError
    "open PATH: is a named pipe (FIFO), not a regular file" otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        # A socket cannot be opened at all: say what it is.
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise OSError("open %s: is %s, not a regular file" % (path, _kind(mode))) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError("open %s: is %s, not a regular file" % (path, _kind(mode)))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_json(path: str, what: str) -> Any:
    """The JSON document in the regular file path, of at most JSON_LIMIT
    bytes (what names the file in the error: "a truth file")."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > JSON_LIMIT:
            raise OSError("read %s: %d bytes, more than the %s %s may have" % (path, size, _size(JSON_LIMIT), what))
        b = f.read(JSON_LIMIT + 1)
        if len(b) > JSON_LIMIT:
            raise OSError("read %s: %d or more bytes, more than the %s %s may have"
                          % (path, JSON_LIMIT, _size(JSON_LIMIT), what))
    try:
        return json.loads(b.decode("utf-8"))
    except ValueError as e:
        raise ValueError("%s: %s" % (path, e)) from None


def load_npy(path: str) -> "npt.NDArray[Any]":
    """The array in the regular .npy file path (never pickled objects)."""
    with open_regular(path) as f:
        if f.read(len(_NPY_MAGIC)) != _NPY_MAGIC:
            raise ValueError("%s: not a .npy file (it does not start with \\x93NUMPY)" % path)
        f.seek(0)
        try:
            a: "npt.NDArray[Any]" = np.load(f, allow_pickle=False)
        except ValueError as e:
            raise ValueError("%s: %s" % (path, e)) from None
    return a


def write_atomic(path: str, data: bytes) -> None:
    """Write data to path atomically: into a temporary file beside it,
    renamed into place. Only a regular file is replaced (a symbolic link is
    followed, and stays); any other file there is refused, saying what it
    is, as the program refuses it as input."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = stat.S_IFREG
    if not stat.S_ISREG(mode):
        raise OSError("write %s: is %s, not a regular file" % (path, _kind(mode)))
    d, base = os.path.split(target)
    # 0666 less the umask, as the program creates files; readers skip
    # names starting with ".".
    for n in itertools.count():
        tmp = os.path.join(d or ".", ".%s.tmp%d-%d" % (base, os.getpid(), n))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def npy_bytes(a: "npt.NDArray[Any]") -> bytes:
    """a as the bytes of a .npy file."""
    b = io.BytesIO()
    np.save(b, a, allow_pickle=False)
    return b.getvalue()
