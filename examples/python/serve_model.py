#!/usr/bin/env python3
"""Serve a temporal model to tempora over standard input and output.

tempora runs your model as a child process and sends it batches of
instances; this module speaks that protocol (docs/protocol.md) so that you
only write a prediction function:

    from serve_model import serve

    model = load_my_lstm("model.pt")          # load once, before serving

    def predict(batch):
        # batch: M x D x L (instances x features x timesteps), float64.
        # Return M predictions: probabilities of class 1 for
        # classification, real values for regression.
        return model(batch)

    serve(predict)

Then:

    tempora explain -data X.npy -targets y.npy -task classification \\
        -model-cmd "python3 my_server.py" -method time

The batch is a NumPy array of shape (M, D, L) when NumPy is installed, and
otherwise a list of M lists of D lists of L floats. predict may return any
sequence of M numbers (a NumPy array of shape (M,) or (M, 1), a list, ...).
If predict raises, the exception message is sent to tempora, which stops
with that error.

Standard output carries the protocol, so importing this module redirects
everything else written there (print, C libraries writing to file descriptor
1) to standard error. Import it before loading a model that prints.

Run as a program, this file serves a demonstration model: the additive
windowed model of tempora's examples/gomodel, with the same options:

    python3 serve_model.py [--terms "feature:start:end:weight;..."]
                           [--bias B] [--task regression|classification]

Standard library only; NumPy is used when available.
"""

import argparse
import math
import os
import struct
import sys
from array import array

try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the environment
    np = None

VERSION = 1
HELLO = b"TMPH"
REQUEST = b"TMPQ"
RESPONSE = b"TMPR"
STATUS_OK = 0
STATUS_ERROR = 1
MAX_VALUES = 1 << 31

_REQUEST_HEADER = struct.Struct("<4sIIII")  # magic, version, M, D, L
_RESPONSE_HEADER = struct.Struct("<4sII")   # magic, status, count
_HELLO = struct.Struct("<4sI")              # magic, version


def _claim_stdout():
    """Keep standard output for the protocol; send everything else to stderr.

    The original file descriptor 1 is duplicated for the protocol, then fd 1
    (used by C extensions) is pointed at standard error and sys.stdout
    (used by print) is replaced by sys.stderr. This runs when the module is
    imported, so import serve_model before loading a model that prints.
    """
    try:
        sys.stdout.flush()
    except (AttributeError, ValueError):
        pass
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "wb", buffering=1 << 16)


_PROTOCOL_OUT = _claim_stdout()


class ProtocolError(Exception):
    """The parent sent something that is not a valid request."""


def _read_exactly(stream, n):
    """Read n bytes; return None at end of file before the first byte."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = stream.readinto(view[got:])
        if not k:
            if got == 0:
                return None
            raise ProtocolError("input ended in the middle of a frame (%d of %d bytes)" % (got, n))
        got += k
    return buf


def _decode_batch(raw, m, d, l):
    """Turn M*D*L little-endian float64 values into the batch predict sees."""
    if np is not None:
        return np.frombuffer(raw, dtype="<f8").reshape(m, d, l)
    values = array("d")
    values.frombytes(bytes(raw))
    if sys.byteorder != "little":
        values.byteswap()
    return [[values[(i * d + j) * l:(i * d + j + 1) * l].tolist() for j in range(d)] for i in range(m)]


def _encode_predictions(pred, m):
    """Check predict's answer and return it as M little-endian float64."""
    if np is not None:
        out = np.asarray(pred, dtype="<f8").reshape(-1)
        if out.shape[0] != m:
            raise ValueError("predict returned %d values for a batch of %d instances" % (out.shape[0], m))
        return out.tobytes()
    if hasattr(pred, "tolist"):
        pred = pred.tolist()
    out = array("d")
    for p in pred:
        if isinstance(p, (list, tuple)):
            if len(p) != 1:
                raise ValueError("predict returned a row of %d values, want one value per instance" % len(p))
            p = p[0]
        out.append(float(p))
    if len(out) != m:
        raise ValueError("predict returned %d values for a batch of %d instances" % (len(out), m))
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


def _write_error(out, message):
    data = message.encode("utf-8", "replace")[: 1 << 20]
    out.write(_RESPONSE_HEADER.pack(RESPONSE, STATUS_ERROR, len(data)))
    out.write(data)
    out.flush()


def serve(predict, stdin=None, stdout=None):
    """Answer tempora's requests with predict until tempora closes the input.

    predict(batch) receives an M x D x L batch and returns M predictions.
    stdin and stdout default to the process's binary standard input and
    the original standard output, which this module claimed for the
    protocol when it was imported (prints go to standard error).
    """
    if stdin is None:
        stdin = sys.stdin.buffer
    if stdout is None:
        stdout = _PROTOCOL_OUT
    stdout.write(_HELLO.pack(HELLO, VERSION))
    stdout.flush()
    while True:
        header = _read_exactly(stdin, _REQUEST_HEADER.size)
        if header is None:
            return  # shutdown: tempora closed our input
        magic, version, m, d, l = _REQUEST_HEADER.unpack(header)
        if magic != REQUEST or version != VERSION:
            msg = "bad request header (magic %r, version %d)" % (bytes(magic), version)
            _write_error(stdout, msg)
            raise ProtocolError(msg)
        if d == 0 or l == 0 or m * d * l > MAX_VALUES:
            msg = "request has unusable shape %dx%dx%d" % (m, d, l)
            _write_error(stdout, msg)
            raise ProtocolError(msg)
        raw = _read_exactly(stdin, 8 * m * d * l) if m * d * l > 0 else bytearray()
        if raw is None:
            raise ProtocolError("input ended after a request header")
        try:
            body = _encode_predictions(predict(_decode_batch(raw, m, d, l)), m)
        except Exception as e:  # report to tempora, keep serving
            _write_error(stdout, "%s: %s" % (type(e).__name__, e))
            continue
        stdout.write(_RESPONSE_HEADER.pack(RESPONSE, STATUS_OK, m))
        stdout.write(body)
        stdout.flush()


# ---------------------------------------------------------------------------
# Demonstration model: the additive windowed model of tempora's
# internal/examplemodel (score = bias + sum_k weight_k * mean of feature_k
# over timesteps start_k..end_k; sigmoid for classification).

DEFAULT_TERMS = "0:10:19:1.5;3:0:4:-2;7:5:14:0.5"


def parse_terms(spec):
    terms = []
    for part in spec.split(";"):
        part = part.strip()
        if not part:
            continue
        f = part.split(":")
        if len(f) != 4:
            raise ValueError("term %r is not feature:start:end:weight" % part)
        j, s, e = int(f[0]), int(f[1]), int(f[2])
        if j < 0 or s < 0 or s > e:
            raise ValueError("term %r has a bad feature or window" % part)
        terms.append((j, s, e, float(f[3])))
    return terms


def additive_model(terms, bias=0.0, classification=False):
    """Return predict(batch) for the demonstration model."""

    def check(d, l):
        for j, s, e, _ in terms:
            if j >= d or e >= l:
                raise ValueError("term on feature %d, timesteps %d..%d does not fit data with %d features and %d timesteps"
                                 % (j, s, e, d, l))

    def predict_numpy(batch):
        m, d, l = batch.shape
        check(d, l)
        score = np.full(m, bias, dtype=np.float64)
        for j, s, e, w in terms:
            score += w * (batch[:, j, s:e + 1].sum(axis=1) / (e - s + 1))
        return 1 / (1 + np.exp(-score)) if classification else score

    def predict_lists(batch):
        if not batch:
            return []
        check(len(batch[0]), len(batch[0][0]))
        out = []
        for inst in batch:
            score = bias
            for j, s, e, w in terms:
                total = 0.0
                for v in inst[j][s:e + 1]:
                    total += v
                score += w * (total / (e - s + 1))
            out.append(1 / (1 + math.exp(-score)) if classification else score)
        return out

    return predict_numpy if np is not None else predict_lists


def main():
    ap = argparse.ArgumentParser(description="Serve tempora's demonstration additive windowed model.")
    ap.add_argument("--terms", default=DEFAULT_TERMS, help="model terms feature:start:end:weight;...")
    ap.add_argument("--bias", type=float, default=0.0, help="constant added to the score")
    ap.add_argument("--task", choices=["regression", "classification"], default="regression")
    ap.add_argument("--no-numpy", action="store_true", help="use the pure-Python path even if NumPy is installed")
    args = ap.parse_args()
    global np
    if args.no_numpy:
        np = None
    serve(additive_model(parse_terms(args.terms), args.bias, args.task == "classification"))


if __name__ == "__main__":
    main()
