"""tempora's model protocol (docs/protocol.md in the repository), both sides.

The model side (serve_stream) answers request frames with the predictions of
a Python callable; it runs over a socket connected to the tempora program
(with an optional shared buffer holding the request values) or over standard
input and output. The tempora side (Client) sends batches to a model program
such as ``tempora serve`` and reads its answers.
"""

import mmap
import os
import socket
import struct
import sys
from typing import IO, Any, Callable, Optional

import numpy as np
import numpy.typing as npt

#: What a model is: a function of a float64 batch of shape (M, D, L) that
#: returns M predictions (anything numpy.asarray accepts, or a tensor).
Predict = Callable[["npt.NDArray[np.float64]"], Any]

VERSION = 1
HELLO_MAGIC = b"TMPH"
REQUEST_MAGIC = b"TMPQ"  # values follow the header
SHARED_REQUEST_MAGIC = b"TMPM"  # values are in the shared buffer
ANSWER_MAGIC = b"TMPR"
STATUS_OK = 0
STATUS_ERROR = 1
MAX_VALUES = 1 << 31
MAX_MESSAGE = 1 << 20

HELLO = struct.pack("<4sI", HELLO_MAGIC, VERSION)
_REQUEST = struct.Struct("<4sIIII")  # magic, version, M, D, L
_OFFSET = struct.Struct("<Q")  # a shared request's values: byte offset in the buffer
_ANSWER = struct.Struct("<4sII")  # magic, status, count


class ProtocolError(Exception):
    """The other side sent something that is not a valid frame."""


def _read_exactly(readinto: Callable[[memoryview], Optional[int]], view: memoryview) -> bool:
    """Fill view; return False at end of input before its first byte."""
    got, n = 0, len(view)
    while got < n:
        k = readinto(view[got:])
        if not k:
            if got == 0:
                return False
            raise ProtocolError("input ended in the middle of a frame (%d of %d bytes)" % (got, n))
        got += k
    return True


def encode_error(message: str) -> bytes:
    """Return an error answer frame carrying message."""
    data = message.encode("utf-8", "replace")[:MAX_MESSAGE]
    return _ANSWER.pack(ANSWER_MAGIC, STATUS_ERROR, len(data)) + data


def encode_answer(pred: Any, m: int) -> bytes:
    """Return the answer frame for predict's result pred on m instances.

    pred may be anything numpy.asarray accepts (a PyTorch tensor is
    detached and moved to the CPU first), of shape (m,) or (m, 1).
    """
    if not isinstance(pred, np.ndarray):
        if hasattr(pred, "detach"):
            pred = pred.detach()
        if hasattr(pred, "cpu"):
            pred = pred.cpu()
    out = np.asarray(pred, dtype="<f8")
    if out.shape == (m, 1):
        out = out.reshape(m)
    if out.shape != (m,):
        raise ValueError("predict returned an array of shape %s for a batch of %d instances; want (%d,)"
                         % (out.shape, m, m))
    return _ANSWER.pack(ANSWER_MAGIC, STATUS_OK, m) + out.tobytes()


def describe_exception(exc: BaseException) -> str:
    """Name an exception the way the error frame reports it."""
    return "predict raised %s: %s" % (type(exc).__name__, exc)


def serve_stream(predict: Predict, readinto: Callable[[memoryview], Optional[int]], sendall: Callable[[bytes], Any],
                 shared: Optional[mmap.mmap] = None) -> Optional[Exception]:
    """Answer requests with predict until the input ends (or the output
    breaks); return the first exception predict raised, or None. The
    exception is reported to tempora, which then stops; predict is not
    called again.

    readinto(view) reads into a writable buffer and returns the number of
    bytes read (0 at end of input); sendall(data) writes all of data.
    shared is the connection's shared buffer (an mmap), or None. The batch
    passed to predict is a float64 array of shape (M, D, L); it may be a view
    of the shared buffer, valid only during the call.
    """
    sendall(HELLO)
    header = bytearray(_REQUEST.size)
    hview = memoryview(header)
    offset = bytearray(_OFFSET.size)
    oview = memoryview(offset)
    inline = bytearray()
    first = None
    while True:
        try:
            if not _read_exactly(readinto, hview):
                return first  # shutdown: tempora closed the connection
        except ConnectionResetError:
            return first  # tempora has gone without reading everything we sent
        magic, version, m, d, l = _REQUEST.unpack(header)
        n = m * d * l
        off = 0
        if magic == SHARED_REQUEST_MAGIC:
            if not _read_exactly(readinto, oview):
                raise ProtocolError("input ended after a request header")
            off = _OFFSET.unpack(offset)[0]
        problem = None
        if magic not in (REQUEST_MAGIC, SHARED_REQUEST_MAGIC) or version != VERSION:
            problem = "bad request header (magic %r, version %d)" % (bytes(magic), version)
        elif d == 0 or l == 0 or n > MAX_VALUES:
            problem = "request has unusable shape %dx%dx%d" % (m, d, l)
        elif magic == SHARED_REQUEST_MAGIC and (shared is None or off % 8 or off + 8 * n > len(shared)):
            problem = "shared request of %d values at offset %d does not fit the shared buffer (%d bytes)" % (
                n, off, 0 if shared is None else len(shared))
        if problem is not None:
            sendall(encode_error(problem))
            raise ProtocolError(problem)
        if magic == SHARED_REQUEST_MAGIC:
            assert shared is not None
            batch = np.frombuffer(shared, dtype="<f8", count=n, offset=off).reshape(m, d, l)
        else:
            if len(inline) < 8 * n:
                inline = bytearray(8 * n)
            view = memoryview(inline)[:8 * n]
            if n and not _read_exactly(readinto, view):
                raise ProtocolError("input ended after a request header")
            batch = np.frombuffer(inline, dtype="<f8", count=n).reshape(m, d, l)
        if first is not None:
            # tempora stops at the first error; a request it sent before
            # reading that error is not evaluated.
            frame = encode_error("not evaluated: " + describe_exception(first))
        else:
            try:
                frame = encode_answer(predict(batch), m)
            except Exception as exc:  # reported to tempora, which stops
                first = exc
                frame = encode_error(describe_exception(exc))
        del batch
        try:
            sendall(frame)
        except (BrokenPipeError, ConnectionResetError):
            return first  # tempora has gone (after an error, it stops reading)


def serve_socket(predict: Predict, sock: socket.socket, shared: Optional[mmap.mmap] = None) -> Optional[Exception]:
    """serve_stream over a connected socket (buffered, so that a header and
    a shared request's offset take one system call)."""
    reader = sock.makefile("rb", buffering=1 << 16)
    try:
        return serve_stream(predict, reader.readinto, sock.sendall, shared=shared)  # type: ignore[attr-defined]
    finally:
        reader.close()


_claimed: Optional[IO[bytes]] = None


def claim_stdout() -> IO[bytes]:
    """Keep standard output for the protocol and return it as a binary
    stream; from then on Python's print (sys.stdout) and file descriptor 1
    (written by C libraries) go to standard error.

    serve() does this for the time it serves; a model program whose model
    prints while it loads calls claim_stdout() first, before loading it.
    Calling it again returns the same stream.
    """
    global _claimed
    if _claimed is None:
        try:
            sys.stdout.flush()
        except (AttributeError, ValueError):
            pass
        proto = os.fdopen(os.dup(1), "wb", buffering=1 << 16)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        _claimed = proto
    return _claimed


def serve(predict: Predict, stdin: Optional[IO[bytes]] = None, stdout: Optional[IO[bytes]] = None) -> None:
    """Serve predict to a tempora program that started this process with
    ``-model-cmd``: requests on standard input, answers on standard output.

    Standard output belongs to the protocol, so while serving, Python's
    print (sys.stdout) and file descriptor 1 (written by C libraries) are
    redirected to standard error (for good if claim_stdout() was called,
    else until serve returns); do not print to standard output before
    calling serve. Returns when tempora closes the input.
    """
    if stdin is None:
        stdin = sys.stdin.buffer
    saved_fd: Optional[int] = None
    saved_stdout: Any = None
    out: IO[bytes]
    if stdout is not None:
        out = stdout
    elif _claimed is not None:
        out = _claimed
    else:
        sys.stdout.flush()
        saved_stdout, saved_fd = sys.stdout, os.dup(1)
        out = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def sendall(data: bytes) -> None:
        out.write(data)
        out.flush()

    try:
        serve_stream(predict, stdin.readinto, sendall)  # type: ignore[attr-defined]
    finally:
        if saved_fd is not None:
            out.close()
            os.dup2(saved_fd, 1)
            os.close(saved_fd)
            sys.stdout = saved_stdout


class Client:
    """The tempora side of the protocol over a pair of binary streams (a
    model program's standard input and output)."""

    def __init__(self, w: IO[bytes], r: IO[bytes]) -> None:
        self._w, self._r = w, r
        hello = self._read(len(HELLO), "its hello frame")
        if hello[:4] != HELLO_MAGIC:
            raise ProtocolError("expected the hello frame %r, got %r" % (HELLO_MAGIC, hello))
        version = struct.unpack("<I", hello[4:])[0]
        if version != VERSION:
            raise ProtocolError("model speaks protocol version %d, want %d" % (version, VERSION))

    def _read(self, n: int, what: str) -> bytearray:
        buf = bytearray(n)
        if n and not _read_exactly(self._r.readinto, memoryview(buf)):  # type: ignore[attr-defined]
            raise EOFError("the model closed its output before %s" % what)
        return buf

    def predict(self, batch: "npt.ArrayLike") -> "npt.NDArray[np.float64]":
        """Send batch (M, D, L) and return the M predictions. A model error
        raises RuntimeError with the model's message."""
        x = np.ascontiguousarray(batch, dtype="<f8")
        if x.ndim != 3 or x.shape[0] == 0 or x.shape[1] == 0 or x.shape[2] == 0:
            raise ValueError("batch must have shape (instances, features, timesteps) with none zero, got %s" % (x.shape,))
        m, d, l = x.shape
        self._w.write(_REQUEST.pack(REQUEST_MAGIC, VERSION, m, d, l))
        self._w.write(x.data)
        self._w.flush()
        magic, status, count = _ANSWER.unpack(self._read(_ANSWER.size, "answering"))
        if magic != ANSWER_MAGIC:
            raise ProtocolError("expected an answer frame, got magic %r" % bytes(magic))
        if status == STATUS_ERROR:
            raise RuntimeError(self._read(min(count, MAX_MESSAGE), "the end of its error message").decode("utf-8", "replace"))
        if status != STATUS_OK or count != m:
            raise ProtocolError("answer with status %d and %d predictions for %d instances" % (status, count, m))
        return np.frombuffer(self._read(8 * m, "the end of its answer"), dtype="<f8").astype(np.float64)
