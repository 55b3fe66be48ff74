"""The model side of the protocol (docs/protocol.md), frame by frame."""

import io
import mmap
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import tempora
from tempora import _protocol

import _models
from test_explain import without_runtime

HERE = os.path.dirname(os.path.abspath(__file__))


def request(magic, x, offset=0, version=2):
    m, d, l = x.shape
    head = struct.pack("<4sIIII", magic, version, m, d, l)
    if magic == b"TMPM":
        return head + struct.pack("<Q", offset)
    return head + x.astype("<f8").tobytes()


def answers(data):
    """Parse a stream of answer frames into a list of arrays or messages."""
    out, k = [], 0
    while k < len(data):
        magic, status, count = struct.unpack_from("<4sII", data, k)
        assert magic == b"TMPR", magic
        k += 12
        if status == 0:
            out.append(np.frombuffer(data, "<f8", count, k).copy())
            k += 8 * count
        else:
            out.append(data[k:k + count].decode())
            k += count
    return out


class ServeStreamTest(unittest.TestCase):
    def run_stream(self, frames, predict, shared=None):
        src, sink = io.BytesIO(b"".join(frames)), io.BytesIO()
        first = _protocol.serve_stream(predict, src.readinto, sink.write, shared=shared)
        data = sink.getvalue()
        # The hello: version 2, holding no data (H, M, D, L and CRC-32 zero).
        self.assertEqual(data[:28], b"TMPH\x02\x00\x00\x00" + bytes(20))
        return first, answers(data[28:])

    def test_inline_and_shared_requests(self):
        x1, x2 = _models.data(5, 6, 10, seed=1), _models.data(3, 6, 10, seed=2)
        shared = mmap.mmap(-1, 8192)
        shared[:x2.nbytes] = x2.astype("<f8").tobytes()
        shared[4096:4096 + x1.nbytes] = x1.astype("<f8").tobytes()
        first, got = self.run_stream([request(b"TMPQ", x1), request(b"TMPM", x2), request(b"TMPM", x1, 4096)],
                                     _models.additive, shared)
        self.assertIsNone(first)
        self.assertTrue(np.array_equal(got[0], _models.additive(x1)))
        self.assertTrue(np.array_equal(got[1], _models.additive(x2)))
        self.assertTrue(np.array_equal(got[2], _models.additive(x1)))

    def test_exception_becomes_an_error_frame(self):
        x = _models.data(2, 6, 10)
        calls = []

        def predict(batch):
            calls.append(1)
            if len(calls) == 2:
                raise KeyError("weights")
            return _models.additive(batch)

        first, got = self.run_stream([request(b"TMPQ", x)] * 3, predict)
        self.assertIsInstance(first, KeyError)
        self.assertTrue(np.array_equal(got[0], _models.additive(x)))
        self.assertEqual(got[1], "predict raised KeyError: 'weights'")
        # A request already sent when the error was: answered, not evaluated.
        self.assertEqual(got[2], "not evaluated: predict raised KeyError: 'weights'")
        self.assertEqual(len(calls), 2)

    def test_broken_output_ends_serving(self):
        x = _models.data(2, 6, 10)
        src = io.BytesIO(request(b"TMPQ", x) * 2)
        sent = []

        def sendall(data):
            if len(sent) == 2:  # the hello and one answer went through
                raise BrokenPipeError()
            sent.append(data)

        def predict(batch):
            if len(sent) == 2:
                raise ValueError("late")
            return _models.additive(batch)

        first = _protocol.serve_stream(predict, src.readinto, sendall)
        self.assertIsInstance(first, ValueError)

    def test_answers_of_any_array_like(self):
        class FakeTensor:  # what a PyTorch tensor offers
            def __init__(self, a):
                self.a = a

            def detach(self):
                return self

            def cpu(self):
                return self.a

        x = _models.data(4, 6, 10)
        for predict in (lambda b: _models.additive(b).tolist(),
                        lambda b: _models.additive(b).reshape(-1, 1).astype(np.float32),
                        lambda b: FakeTensor(_models.additive(b))):
            _, got = self.run_stream([request(b"TMPQ", x)], predict)
            self.assertTrue(np.allclose(got[0], _models.additive(x), rtol=1e-6))
        for bad in (lambda b: np.zeros((len(b), 2)), lambda b: np.zeros(len(b) + 1), lambda b: 1.0):
            first, got = self.run_stream([request(b"TMPQ", x)], bad)
            self.assertIsInstance(first, ValueError)
            self.assertIn("for a batch of 4 instances", got[0])

    def test_malformed_requests(self):
        x = _models.data(2, 6, 10)
        for frames, why in [
            ([b"GARBAGE!" * 3], "bad request header"),
            ([request(b"TMPM", x)], "does not fit the shared buffer"),
            ([request(b"TMPM", x, 4)], "does not fit the shared buffer"),
            ([struct.pack("<4sIIII", b"TMPQ", 2, 2, 0, 3)], "unusable shape"),
            ([request(b"TMPQ", x, version=1)], "version 1"),
            ([request(b"TMPQ", x, version=3)], "version 3"),
        ]:
            with self.subTest(why=why), self.assertRaisesRegex(_protocol.ProtocolError, why):
                self.run_stream(frames, _models.additive)
        with self.assertRaisesRegex(_protocol.ProtocolError, "in the middle of a frame"):
            self.run_stream([request(b"TMPQ", x)[:-3]], _models.additive)


class VersionOneTest(unittest.TestCase):
    def test_program_refuses_version_one(self):
        # A model side of protocol version 1 (an 8-byte hello, then it waits
        # for requests) is refused at start, at once, with how to upgrade it.
        code = "import sys, time; sys.stdout.buffer.write(b'TMPH\\x01\\x00\\x00\\x00'); sys.stdout.flush(); time.sleep(600)"
        cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-c", code])
        X = _models.data(20, seed=1)
        with tempfile.TemporaryDirectory() as tmp:
            np.save(os.path.join(tmp, "X.npy"), X)
            np.save(os.path.join(tmp, "y.npy"), _models.additive(X))
            r = subprocess.run([tempora.find_binary(), "explain", "-data", os.path.join(tmp, "X.npy"),
                                "-targets", os.path.join(tmp, "y.npy"), "-task", "regression", "-model-cmd", cmd,
                                "-model-timeout", "10m"], capture_output=True, timeout=120)
        self.assertNotEqual(r.returncode, 0)
        err = r.stderr.decode()
        for want in ("protocol version 1", "tempora.serve", "procmodel.Serve"):
            self.assertIn(want, err)


class ServeStdioTest(unittest.TestCase):
    def test_claim_stdout(self):
        # After claim_stdout, print and file descriptor 1 reach standard
        # error; only what is written to the claimed stream reaches standard
        # output. A second claim returns the same stream.
        code = ("import os, sys; sys.path.insert(0, %r); import tempora; out = tempora.claim_stdout(); "
                "assert tempora.claim_stdout() is out; print('chatty'); os.write(1, b'from C'); "
                "out.write(b'protocol'); out.flush()" % os.path.join(HERE, ".."))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
        self.assertEqual(r.stdout, b"protocol")
        self.assertIn(b"chatty", r.stderr)
        self.assertIn(b"from C", r.stderr)

    def test_model_cmd_program(self):
        # tempora.serve makes a script a -model-cmd program; its explanation
        # equals the one through tempora.explain. The model prints, from
        # Python and to file descriptor 1: serve keeps that off the protocol.
        X = _models.data(200, seed=6)
        y = _models.additive(X) + np.random.default_rng(1).normal(scale=0.3, size=200)
        want = tempora.explain(_models.additive, X, y, task="regression", seed=2, permutations=20)
        with tempfile.TemporaryDirectory() as tmp:
            np.save(os.path.join(tmp, "X.npy"), X)
            np.save(os.path.join(tmp, "y.npy"), y)
            code = "import sys; sys.path.insert(0, %r); import os, tempora, _models; tempora.serve(lambda b: (print('chatty model'), os.write(1, b'C code'), _models.additive(b))[-1])" % HERE
            cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-c", code])
            out = os.path.join(tmp, "e.json")
            subprocess.run([tempora.find_binary(), "explain", "-data", os.path.join(tmp, "X.npy"),
                            "-targets", os.path.join(tmp, "y.npy"), "-task", "regression", "-seed", "2",
                            "-permutations", "20", "-model-cmd", cmd, "-json", out],
                           check=True, capture_output=True)
            with open(out) as f:
                got = tempora.Explanation(f.read())
        self.assertEqual(without_runtime(got), without_runtime(want))


if __name__ == "__main__":
    unittest.main()
