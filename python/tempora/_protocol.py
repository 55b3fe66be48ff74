"""tempora's model protocol (docs/protocol.md in the repository), both sides.

The protocol has one version, 2. The model side (serve_stream) says in its
hello whether it holds data from the start and how many outputs per instance
its model returns (outputs=K: class probabilities, horizons, output steps; a
model of one output announces nothing), answers request frames with the
predictions of a Python callable, and keeps resident data (a "TMPD" frame, or
the data it holds from the start), to which it applies the blocks of block
requests ("TMPP") before predicting them; it runs over a socket connected to
the tempora program (with an optional shared buffer holding the request
values) or over standard input and output. The tempora side (Client) sends
batches to a model program such as ``tempora serve`` and reads its answers.
"""

import mmap
import os
import socket
import struct
import sys
import zlib
from typing import IO, Any, Callable, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

#: What a model is: a function of a float64 batch of shape (M, D, L) that
#: returns M predictions, or an (M, K) array for a model of K outputs
#: (anything numpy.asarray accepts, or a tensor).
Predict = Callable[["npt.NDArray[np.float64]"], Any]

VERSION = 2  # the protocol's one version: of every hello and every frame
HELLO_MAGIC = b"TMPH"
REQUEST_MAGIC = b"TMPQ"  # values follow the header
SHARED_REQUEST_MAGIC = b"TMPM"  # values are in the shared buffer
RESIDENT_MAGIC = b"TMPD"  # the data block requests refer to
BLOCKS_MAGIC = b"TMPP"  # blocks of the resident data to predict
ANSWER_MAGIC = b"TMPR"
STATUS_OK = 0
STATUS_ERROR = 1
MAX_VALUES = 1 << 31
MAX_MESSAGE = 1 << 20
MAX_BLOCKS = 1 << 20
MAX_OUTPUTS = 1 << 20  # the most outputs per instance a hello announces
VALUES_INLINE, VALUES_SHARED = 0, 1
HELLO_HOLDS, HELLO_OUTPUTS = 1, 2  # the bits of a hello's flags: H (data held), O (K follows)

_HELLO_HEAD = struct.Struct("<4sI")  # a hello's magic and version, read (and checked) first
_HELD = struct.Struct("<IIIII")  # the rest of a hello: flags, M, D, L, CRC-32 of the data held from the start
_OUTPUTS = struct.Struct("<I")  # K, after the CRC-32 of a hello whose flags have O
HELLO = _HELLO_HEAD.pack(HELLO_MAGIC, VERSION) + _HELD.pack(0, 0, 0, 0, 0)  # a model side of one output that holds no data
#: What a refusal of a model side of version 1 says to do.
UPGRADE = ("serve it with the current tempora Python package (tempora.serve, as examples/python/serve_model.py does) "
           "or with procmodel.Serve (docs/protocol.md)")
_REQUEST = struct.Struct("<4sIIII")  # magic, version, M, D, L
_OFFSET = struct.Struct("<Q")  # a shared request's values: byte offset in the buffer
_BLOCKS_REST = struct.Struct("<IQ")  # after magic, version, K, R, V: S, offset (a block request's header is 32 bytes)
_BLOCK = struct.Struct("<IIIII")  # lo, hi, start, end, F; then F feature indices
_ANSWER = struct.Struct("<4sII")  # magic, status, count
_CHUNK = 1 << 20  # bytes read at a time for values of an untrusted count


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


def encode_answer(pred: Any, m: int, outputs: int = 1) -> bytes:
    """Return the answer frame for predict's result pred on m instances of
    a model of the given outputs per instance.

    pred may be anything numpy.asarray accepts (a PyTorch tensor is
    detached and moved to the CPU first), of shape (m,) or (m, 1) for one
    output, (m, outputs) otherwise.
    """
    out = _predictions(pred, m, outputs)
    return _ANSWER.pack(ANSWER_MAGIC, STATUS_OK, out.size) + out.tobytes()


def _predictions(pred: Any, m: int, outputs: int = 1) -> "npt.NDArray[np.float64]":
    """predict's result on m instances as a little-endian float64 array of
    shape (m,), or, for a model of several outputs, of the m·outputs
    predictions instance-major (the rows of an (m, outputs) array)."""
    if not isinstance(pred, np.ndarray):
        if hasattr(pred, "detach"):
            pred = pred.detach()
        if hasattr(pred, "cpu"):
            pred = pred.cpu()
    out = np.asarray(pred, dtype="<f8")
    if outputs == 1:
        if out.shape == (m, 1):
            out = out.reshape(m)
        if out.shape != (m,):
            raise ValueError("predict returned an array of shape %s for a batch of %d instances; want (%d,)"
                             % (out.shape, m, m))
        return out
    if out.shape != (m, outputs):
        raise ValueError("predict returned an array of shape %s for a batch of %d instances of a model of %d outputs; "
                         "want (%d, %d)" % (out.shape, m, outputs, m, outputs))
    return np.ascontiguousarray(out).reshape(m * outputs)


def check_outputs(outputs: int) -> int:
    """Check the outputs per instance a model side announces: an int from 1
    to MAX_OUTPUTS."""
    if isinstance(outputs, bool) or not isinstance(outputs, (int, np.integer)) or not 1 <= outputs <= MAX_OUTPUTS:
        raise ValueError("outputs must be an integer from 1 to %d (the model's outputs per instance), got %r"
                         % (MAX_OUTPUTS, outputs))
    return int(outputs)


def read_only(batch: "npt.NDArray[np.float64]") -> "npt.NDArray[np.float64]":
    """batch, made read-only, as predict receives every batch: a block
    request's batch is a view of the resident working copy, which a predict
    that wrote into it (used it as scratch, normalised it in place) would
    change for every later draw. The flag costs nothing; a private copy
    (0.20 ms for a batch of 2000 x 12 x 48 on the 2-core development
    machine, against 0.41 ms for a NumPy linear model on it) would cost
    each draw its instances' every cell, not the block it perturbs, and a
    CRC-32 that detects a write 1.6 ms (docs/decisions.md, "Model
    processes")."""
    batch.flags.writeable = False
    return batch


def describe_exception(exc: BaseException) -> str:
    """Name an exception the way the error frame reports it; a write into
    the read-only batch is named as such."""
    if isinstance(exc, ValueError) and "read-only" in str(exc):
        return ("predict wrote into its batch, which is read-only (tempora's data, which later batches reuse): "
                "copy it before changing it (x = x.copy()); it raised %s: %s" % (type(exc).__name__, exc))
    return "predict raised %s: %s" % (type(exc).__name__, exc)


def _read_growing(readinto: Callable[[memoryview], Optional[int]], nbytes: int) -> bytearray:
    """Read nbytes, growing the buffer (doubling from 16 MiB) as they
    arrive, so that a corrupt count costs no more than about twice what the
    input holds."""
    buf = bytearray(min(nbytes, 1 << 24))
    got = 0
    while got < nbytes:
        if got == len(buf):
            buf.extend(bytes(min(len(buf), nbytes - len(buf))))
        view = memoryview(buf)[got:]
        k = readinto(view)
        del view
        if not k:
            raise ProtocolError("input ended in the middle of a frame (%d of %d value bytes)" % (got, nbytes))
        got += k
    return buf


#: A parsed block: rows lo to hi, its features, timesteps start to end
#: (inclusive), and its values of shape (hi - lo, len(features), end - start + 1).
_Block = Tuple[int, int, List[int], int, int, "npt.NDArray[np.float64]"]


class _Resident:
    """The model side's resident data: a working copy of the
    data of the last resident data frame, to which blocks are applied (the
    original values of the block it holds perturbed are kept aside)."""

    def __init__(self, outputs: int = 1) -> None:
        self.outputs = outputs  # predictions per instance
        self.x: Optional["npt.NDArray[np.float64]"] = None
        self.work: Optional["npt.NDArray[np.float64]"] = None
        # The block the working copy holds perturbed: ((lo, hi, features,
        # start, end), runs of _runs, the original values of each run), or
        # None when it equals the data.
        self.dirty: Optional[Tuple[Tuple[int, int, Tuple[int, ...], int, int], List[Tuple[int, int, int]],
                                   List["npt.NDArray[np.float64]"]]] = None

    def hold(self, x: "npt.NDArray[np.float64]") -> None:
        """Hold x from the start (the hello says so): x itself is the working copy,
        to which blocks are applied and restored, so it must be an array
        nobody else uses while serving (tempora.explain maps the data file
        it wrote, copy-on-write)."""
        self.work = self.x = x
        self.dirty = None

    def read(self, readinto: Callable[[memoryview], Optional[int]], version: int, m: int, d: int, l: int,
             shared: Optional[mmap.mmap]) -> None:
        """Read the rest of a resident data frame (after magic, version, M,
        D and L)."""
        rest = bytearray(_BLOCKS_REST.size)
        if not _read_exactly(readinto, memoryview(rest)):
            raise ProtocolError("input ended after a resident data header")
        where, offset = _BLOCKS_REST.unpack(rest)
        n = m * d * l
        if version != VERSION:
            raise _Malformed("resident data has protocol version %d, want %d" % (version, VERSION))
        if m == 0 or d == 0 or l == 0 or n > MAX_VALUES:
            raise _Malformed("resident data has unusable shape %dx%dx%d" % (m, d, l))
        if where == VALUES_INLINE and offset != 0:
            raise _Malformed("resident data with inline values has offset %d, want 0" % offset)
        if where == VALUES_SHARED and (shared is None or offset % 8 or offset + 8 * n > len(shared)):
            raise _Malformed("resident data's %d values at offset %d do not fit the shared buffer (%d bytes)"
                             % (n, offset, 0 if shared is None else len(shared)))
        if where not in (VALUES_INLINE, VALUES_SHARED):
            raise _Malformed("resident data with unknown value source %d (want 0, inline, or 1, shared)" % where)
        if where == VALUES_SHARED:
            assert shared is not None
            x = np.frombuffer(shared, dtype="<f8", count=n, offset=offset).astype(np.float64)  # a copy
        else:
            x = np.frombuffer(_read_growing(readinto, 8 * n), dtype="<f8").astype(np.float64, copy=False)
        # One copy of the data: the working copy, whose perturbed block is
        # restored from a saved copy of that block's original values.
        self.work = x.reshape(m, d, l)
        self.x = self.work
        self.dirty = None

    def read_blocks(self, readinto: Callable[[memoryview], Optional[int]], version: int, k: int, rows: int, vals: int,
                    shared: Optional[mmap.mmap]) -> List[_Block]:
        """Read the rest of a block request (after magic, version, K, R and
        V) and return its blocks as (lo, hi, features, start, end, values)."""
        rest = bytearray(_BLOCKS_REST.size)
        if not _read_exactly(readinto, memoryview(rest)):
            raise ProtocolError("input ended after a block request header")
        where, offset = _BLOCKS_REST.unpack(rest)
        if version != VERSION:
            raise _Malformed("block request with protocol version %d, want %d" % (version, VERSION))
        if self.x is None:
            raise _Malformed("block request before any resident data frame (TMPD)")
        if not 1 <= k <= MAX_BLOCKS:
            raise _Malformed("block request with %d blocks, want 1 to %d" % (k, MAX_BLOCKS))
        if not k <= rows <= MAX_VALUES // self.outputs:
            raise _Malformed("block request with %d blocks announces %d rows, want %d to %d"
                             % (k, rows, k, MAX_VALUES // self.outputs))
        if not k <= vals <= MAX_VALUES:
            raise _Malformed("block request with %d blocks announces %d values, want %d to %d" % (k, vals, k, MAX_VALUES))
        if where == VALUES_INLINE and offset != 0:
            raise _Malformed("block request with inline values has offset %d, want 0" % offset)
        if where == VALUES_SHARED and (shared is None or offset % 8 or offset + 8 * vals > len(shared)):
            raise _Malformed("block request's %d values at offset %d do not fit the shared buffer (%d bytes)"
                             % (vals, offset, 0 if shared is None else len(shared)))
        if where not in (VALUES_INLINE, VALUES_SHARED):
            raise _Malformed("block request with unknown value source %d (want 0, inline, or 1, shared)" % where)
        m, d, l = self.x.shape
        descs = []
        got_rows = got_vals = 0
        head = bytearray(_BLOCK.size)
        for b in range(k):
            if not _read_exactly(readinto, memoryview(head)):
                raise ProtocolError("input ended in block %d of %d" % (b, k))
            lo, hi, start, end, nf = _BLOCK.unpack(head)
            if lo >= hi or hi > m:
                raise _Malformed("block %d has rows [%d, %d), resident data has %d instances" % (b, lo, hi, m))
            if start > end or end >= l:
                raise _Malformed("block %d has timesteps [%d, %d], resident data has %d" % (b, start, end, l))
            if not 1 <= nf <= d:
                raise _Malformed("block %d has %d features, resident data has %d" % (b, nf, d))
            fb = bytearray(4 * nf)
            if not _read_exactly(readinto, memoryview(fb)):
                raise ProtocolError("input ended in the features of block %d" % b)
            feats = list(struct.unpack("<%dI" % nf, fb))
            for j in feats:
                if j >= d:
                    raise _Malformed("block %d lists feature %d, resident data has %d" % (b, j, d))
            if len(set(feats)) != nf:
                raise _Malformed("block %d lists a feature twice" % b)
            got_rows += hi - lo
            got_vals += (hi - lo) * nf * (end - start + 1)
            if got_rows > rows or got_vals > vals:
                raise _Malformed("blocks 0 to %d hold %d rows and %d values, more than the %d and %d announced"
                                 % (b, got_rows, got_vals, rows, vals))
            descs.append((lo, hi, feats, start, end))
        if got_rows != rows or got_vals != vals:
            raise _Malformed("blocks hold %d rows and %d values, the header announced %d and %d"
                             % (got_rows, got_vals, rows, vals))
        if where == VALUES_SHARED:
            assert shared is not None
            # A view of the shared buffer: tempora leaves it alone until
            # the answer, and the blocks are applied before that.
            values = np.frombuffer(shared, dtype="<f8", count=vals, offset=offset).astype(np.float64, copy=False)
        else:
            values = np.frombuffer(_read_growing(readinto, 8 * vals), dtype="<f8").astype(np.float64, copy=False)
        out = []
        at = 0
        for lo, hi, feats, start, end in descs:
            n = (hi - lo) * len(feats) * (end - start + 1)
            out.append((lo, hi, feats, start, end, values[at:at + n].reshape(hi - lo, len(feats), end - start + 1)))
            at += n
        return out

    def predict(self, predict: Predict, blocks: List[_Block]) -> bytes:
        """Predict each block on the working copy and return the answer.
        When predict is a guarded call (tempora.explain's, with a run
        method), the whole request is one guarded call."""
        run = getattr(predict, "run", None)
        inner = getattr(predict, "predict", None)
        if run is not None and inner is not None:
            assert self.work is not None
            lo, hi = blocks[0][0], blocks[0][1]
            return run(lambda: self._predict(inner, blocks), self.work[lo:hi])  # type: ignore[no-any-return]
        return self._predict(predict, blocks)

    def _predict(self, predict: Predict, blocks: List[_Block]) -> bytes:
        work = self.work
        assert work is not None
        parts = []
        for lo, hi, feats, start, end, vals in blocks:
            key = (lo, hi, tuple(feats), start, end)
            if self.dirty is not None and self.dirty[0] != key:
                self.clean()
            runs = _runs(feats)
            # The working copy differs from the data in this block until a
            # block of other cells comes (a block of the same cells
            # overwrites all of them): restoring only then halves the copies
            # of the many draws of one test.
            if self.dirty is None:
                self.dirty = (key, runs, [work[lo:hi, j0:j1, start:end + 1].copy() for _, j0, j1 in runs])
            for f0, j0, j1 in runs:
                work[lo:hi, j0:j1, start:end + 1] = vals[:, f0:f0 + j1 - j0]
            batch = read_only(work[lo:hi])
            parts.append(_predictions(predict(batch), hi - lo, self.outputs))
            del batch
        out = np.concatenate(parts) if len(parts) > 1 else parts[0]
        return _ANSWER.pack(ANSWER_MAGIC, STATUS_OK, len(out)) + out.tobytes()

    def clean(self) -> None:
        """Restore the working copy's perturbed block, if any."""
        if self.dirty is not None:
            assert self.work is not None
            (lo, hi, _, start, end), runs, saved = self.dirty
            for (_, j0, j1), orig in zip(runs, saved):
                self.work[lo:hi, j0:j1, start:end + 1] = orig
            self.dirty = None


def _runs(feats: List[int]) -> List[Tuple[int, int, int]]:
    """Split a block's feature list into runs of consecutive indices, as
    (position in the list, first feature, one past the last), so that each
    run is a plain slice of the data (no fancy-indexing copies)."""
    runs = []
    f0 = 0
    for f in range(1, len(feats) + 1):
        if f == len(feats) or feats[f] != feats[f - 1] + 1:
            runs.append((f0, feats[f0], feats[f - 1] + 1))
            f0 = f
    return runs


class _Malformed(ProtocolError):
    """A request that is complete but invalid: answered with an error."""


def hello(x: Optional["npt.NDArray[np.float64]"], outputs: int = 1) -> bytes:
    """The hello frame saying that the model holds x from the start (its
    shape and the CRC-32 of its values' little-endian bytes), or holds
    nothing (x None), and that it returns the given outputs per instance:
    for one output the flags leave O unset (HELLO when x is None), for more
    K follows the CRC-32."""
    outputs = check_outputs(outputs)
    flags, held = 0, (0, 0, 0, 0)
    if x is not None:
        m, d, l = x.shape
        flags, held = HELLO_HOLDS, (m, d, l, data_crc(x))
    frame = _HELLO_HEAD.pack(HELLO_MAGIC, VERSION) + _HELD.pack(flags | (HELLO_OUTPUTS if outputs > 1 else 0), *held)
    return frame + _OUTPUTS.pack(outputs) if outputs > 1 else frame


def data_crc(x: "npt.NDArray[np.float64]") -> int:
    """The CRC-32 (zlib.crc32) of x's values as little-endian float64
    bytes, in C order: what a hello announces of the data held."""
    if x.dtype != np.dtype("<f8") or not x.flags.c_contiguous:
        x = np.ascontiguousarray(x, dtype="<f8")
    return zlib.crc32(memoryview(x.data).cast("B"))


def holdable(x: Any) -> bool:
    """Whether x can be held from the start: a writable, C-contiguous,
    little-endian float64 array of three non-zero dimensions."""
    return (isinstance(x, np.ndarray) and x.ndim == 3 and 0 not in x.shape and x.dtype == np.dtype("<f8")
            and x.flags.c_contiguous and x.flags.writeable and x.size <= MAX_VALUES)


def serve_stream(predict: Predict, readinto: Callable[[memoryview], Optional[int]], sendall: Callable[[bytes], Any],
                 shared: Optional[mmap.mmap] = None,
                 held: Optional["npt.NDArray[np.float64]"] = None, outputs: int = 1) -> Optional[Exception]:
    """Answer requests with predict until the input ends (or the output
    breaks); return the first exception predict raised, or None. The
    exception is reported to tempora, which then stops; predict is not
    called again.

    readinto(view) reads into a writable buffer and returns the number of
    bytes read (0 at end of input); sendall(data) writes all of data.
    shared is the connection's shared buffer (an mmap), or None. The batch
    passed to predict is a read-only float64 array of shape (M, D, L), valid
    only during the call: a view of the shared buffer, of this side's
    request buffer or of the resident data (a predict that writes into it
    raises an error that names the write; copy it to change it).

    With held (an array for which holdable is true), this side says in its
    hello that it holds held from the start as its resident data, so that
    tempora sends no resident data frame when it explains that very data
    (docs/protocol.md, "Data the model holds from the start"); held is then
    the working copy: blocks are applied to it and restored before a block
    of other cells, so it may be left with the last block applied: pass an
    array nobody else uses (tempora.explain passes a copy-on-write map of
    the data file it wrote). Without it, this side says it holds nothing.

    outputs is the number of outputs per instance of the model (K:
    class probabilities, horizons, output steps), announced in the hello;
    predict then returns an array of shape (M, K) for a batch of M
    instances, and every answer carries its M·K predictions row by row. For
    outputs=1, the default, predict returns M predictions (shape (M,) or
    (M, 1)) and the hello is that of a model of one output.
    """
    outputs = check_outputs(outputs)
    resident = _Resident(outputs)
    if held is not None:
        if not holdable(held):
            raise ValueError("held must be a writable C-contiguous float64 array of shape (M, D, L)")
        sendall(hello(held, outputs))
        resident.hold(held)
    else:
        sendall(hello(None, outputs))
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
        if magic in (RESIDENT_MAGIC, BLOCKS_MAGIC):
            try:
                if magic == RESIDENT_MAGIC:
                    resident.read(readinto, version, m, d, l, shared)
                    frame = _ANSWER.pack(ANSWER_MAGIC, STATUS_OK, 0)
                else:
                    blocks = resident.read_blocks(readinto, version, m, d, l, shared)
                    if first is not None:
                        frame = encode_error("not evaluated: " + describe_exception(first))
                    else:
                        try:
                            frame = resident.predict(predict, blocks)
                        except Exception as exc:  # reported to tempora, which stops
                            first = exc
                            frame = encode_error(describe_exception(exc))
                    del blocks
            except _Malformed as exc:
                sendall(encode_error(str(exc)))
                raise
            try:
                sendall(frame)
            except (BrokenPipeError, ConnectionResetError):
                return first
            continue
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
        elif m * outputs > MAX_VALUES:
            problem = "request of %d instances x %d outputs, more than %d predictions" % (m, outputs, MAX_VALUES)
        elif magic == SHARED_REQUEST_MAGIC and (shared is None or off % 8 or off + 8 * n > len(shared)):
            problem = "shared request of %d values at offset %d does not fit the shared buffer (%d bytes)" % (
                n, off, 0 if shared is None else len(shared))
        if problem is not None:
            sendall(encode_error(problem))
            raise ProtocolError(problem)
        if magic == SHARED_REQUEST_MAGIC:
            assert shared is not None
            batch = read_only(np.frombuffer(shared, dtype="<f8", count=n, offset=off).reshape(m, d, l))
        else:
            if len(inline) < 8 * n:
                inline = bytearray(8 * n)
            view = memoryview(inline)[:8 * n]
            if n and not _read_exactly(readinto, view):
                raise ProtocolError("input ended after a request header")
            batch = read_only(np.frombuffer(inline, dtype="<f8", count=n).reshape(m, d, l))
        if first is not None:
            # tempora stops at the first error; a request it sent before
            # reading that error is not evaluated.
            frame = encode_error("not evaluated: " + describe_exception(first))
        else:
            try:
                frame = encode_answer(predict(batch), m, outputs)
            except Exception as exc:  # reported to tempora, which stops
                first = exc
                frame = encode_error(describe_exception(exc))
        del batch
        try:
            sendall(frame)
        except (BrokenPipeError, ConnectionResetError):
            return first  # tempora has gone (after an error, it stops reading)


def serve_socket(predict: Predict, sock: socket.socket, shared: Optional[mmap.mmap] = None,
                 held: Optional["npt.NDArray[np.float64]"] = None, outputs: int = 1) -> Optional[Exception]:
    """serve_stream over a connected socket (buffered, so that a header and
    a shared request's offset take one system call)."""
    reader = sock.makefile("rb", buffering=1 << 16)
    try:
        return serve_stream(predict, reader.readinto, sock.sendall, shared=shared, held=held,  # type: ignore[attr-defined]
                            outputs=outputs)
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


def serve(predict: Predict, stdin: Optional[IO[bytes]] = None, stdout: Optional[IO[bytes]] = None,
          outputs: int = 1) -> None:
    """Serve predict to a tempora program that started this process with
    ``-model-cmd``: requests on standard input, answers on standard output.

    predict takes a float64 batch of shape (M, D, L) and returns M
    predictions (probabilities of class 1, or real values). A model of
    several outputs per instance says how many with outputs=K (the K of
    ``tempora explain -outputs KIND:K``: class probabilities, horizons,
    output steps) and returns an array of shape (M, K); tempora refuses a
    model whose K is not the data's.

    Standard output belongs to the protocol, so while serving, Python's
    print (sys.stdout) and file descriptor 1 (written by C libraries) are
    redirected to standard error (for good if claim_stdout() was called,
    else until serve returns); do not print to standard output before
    calling serve. Returns when tempora closes the input.
    """
    outputs = check_outputs(outputs)
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
        serve_stream(predict, stdin.readinto, sendall, outputs=outputs)  # type: ignore[attr-defined]
    finally:
        if saved_fd is not None:
            out.close()
            os.dup2(saved_fd, 1)
            os.close(saved_fd)
            sys.stdout = saved_stdout


class Client:
    """The tempora side of the protocol over a pair of binary streams (a
    model program's standard input and output).

    outputs is the number of outputs per instance the model announced in
    its hello (1 unless it announced K); predict returns M predictions, or
    an (M, K) array for K outputs.
    """

    outputs: int

    def __init__(self, w: IO[bytes], r: IO[bytes]) -> None:
        self._w, self._r = w, r
        # The magic and version first: a model side of another version is
        # refused without waiting for bytes it does not send.
        head = self._read(_HELLO_HEAD.size, "its hello frame")
        magic, version = _HELLO_HEAD.unpack(head)
        if magic != HELLO_MAGIC:
            raise ProtocolError("expected the hello frame %r, got %r" % (HELLO_MAGIC, bytes(head)))
        if version == 1:
            raise ProtocolError("model speaks protocol version 1, which this package no longer serves; "
                                "update it to version %d: %s" % (VERSION, UPGRADE))
        if version != VERSION:
            raise ProtocolError("model speaks protocol version %d; this package speaks version %d" % (version, VERSION))
        # What the model holds from the start does not matter here (a
        # Client sends whole batches), but the flags say whether K follows.
        flags, m, d, l, crc = _HELD.unpack(self._read(_HELD.size, "the end of its hello frame"))
        if flags & ~(HELLO_HOLDS | HELLO_OUTPUTS):
            raise ProtocolError("hello has flags %d, want H + 2*O from 0 to 3" % flags)
        if not flags & HELLO_HOLDS and (m or d or l or crc):
            raise ProtocolError("hello says the model holds no data (H = 0) but gives shape %dx%dx%d" % (m, d, l))
        self.outputs = 1
        if flags & HELLO_OUTPUTS:
            k = _OUTPUTS.unpack(self._read(_OUTPUTS.size, "the end of its hello frame (K outputs)"))[0]
            if not 2 <= k <= MAX_OUTPUTS:
                raise ProtocolError("hello announces K = %d outputs per instance, want 2 to %d" % (k, MAX_OUTPUTS))
            self.outputs = k

    def _read(self, n: int, what: str) -> bytearray:
        buf = bytearray(n)
        if n and not _read_exactly(self._r.readinto, memoryview(buf)):  # type: ignore[attr-defined]
            raise EOFError("the model closed its output before %s" % what)
        return buf

    def predict(self, batch: "npt.ArrayLike") -> "npt.NDArray[np.float64]":
        """Send batch (M, D, L) and return the M predictions, of shape (M,),
        or (M, K) for a model of K outputs (outputs). A model error raises
        RuntimeError with the model's message."""
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
        k = self.outputs
        if status != STATUS_OK or count != m * k:
            if k == 1:
                raise ProtocolError("answer with status %d and %d predictions for %d instances" % (status, count, m))
            raise ProtocolError("answer with status %d and %d predictions for %d instances x %d outputs"
                                % (status, count, m, k))
        pred = np.frombuffer(self._read(8 * m * k, "the end of its answer"), dtype="<f8").astype(np.float64)
        return pred if k == 1 else pred.reshape(m, k)
