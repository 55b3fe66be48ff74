"""Resident data and block requests (docs/protocol.md), missing values,
and the version a model announces."""

import io
import mmap
import struct
import unittest

import numpy as np

import tempora
from tempora import _protocol

import _models
from test_protocol import answers, request


def resident(x, version=2, shared=None, offset=0):
    m, d, l = x.shape
    if shared is not None:
        shared[offset:offset + x.nbytes] = x.astype("<f8").tobytes()
        return struct.pack("<4sIIIIIQ", b"TMPD", version, m, d, l, 1, offset)
    return struct.pack("<4sIIIIIQ", b"TMPD", version, m, d, l, 0, 0) + x.astype("<f8").tobytes()


def block_request(blocks, version=2, shared=None, offset=0, header=None):
    """blocks: (lo, hi, features, start, end, values (rows, F, W)). With
    shared, the values are written there at offset."""
    rows = sum(b[1] - b[0] for b in blocks)
    vals = np.concatenate([np.asarray(b[5], "<f8").ravel() for b in blocks]) if blocks else np.zeros(0)
    k, r, v, where = len(blocks), rows, len(vals), 0
    if shared is not None:
        shared[offset:offset + 8 * len(vals)] = vals.tobytes()
        where = 1
    if header is not None:
        k, r, v, where, offset = header
    out = struct.pack("<4sIIIIIQ", b"TMPP", version, k, r, v, where, offset if where == 1 or header else 0)
    for lo, hi, feats, start, end, _ in blocks:
        out += struct.pack("<5I", lo, hi, start, end, len(feats)) + struct.pack("<%dI" % len(feats), *feats)
    if shared is None:
        out += vals.tobytes()
    return out


def random_blocks(x, seed):
    rng = np.random.default_rng(seed)
    m, d, l = x.shape
    spec = [(0, m, [1], 0, l - 1), (1, 2, [d - 1, 0], 4, 4), (2, m - 1, [3, 1], 0, 2), (0, m, [1, 3], 4, l - 1)]
    return [(lo, hi, f, s, e, rng.normal(size=(hi - lo, len(f), e - s + 1))) for lo, hi, f, s, e in spec]


def expected(predict, x, blocks):
    out = []
    for lo, hi, feats, s, e, vals in blocks:
        w = x.copy()
        w[lo:hi, feats, s:e + 1] = vals
        out.append(predict(w[lo:hi]))
    return np.concatenate(out)


def serve(frames, predict, shared=None):
    src, sink = io.BytesIO(b"".join(frames)), io.BytesIO()
    first = _protocol.serve_stream(predict, src.readinto, sink.write, shared=shared)
    data = sink.getvalue()
    assert data[:28] == _protocol.HELLO, data[:28]
    return first, answers(data[28:])


class BlocksTest(unittest.TestCase):
    def test_blocks_inline_and_shared(self):
        x, x2 = _models.data(6, 6, 10, seed=3), _models.data(5, 6, 10, seed=4)
        b1, b2 = random_blocks(x, 1), random_blocks(x2, 2)
        shared = mmap.mmap(-1, 1 << 16)
        frames = [resident(x), block_request(b1), request(b"TMPQ", x), block_request(b1, shared=shared, offset=8),
                  resident(x2, shared=shared, offset=32768), block_request(b2)]
        first, got = serve(frames, _models.additive, shared)
        self.assertIsNone(first)
        self.assertEqual(len(got[0]), 0)  # the resident data's acknowledgement
        want1 = expected(_models.additive, x, b1)
        self.assertTrue(np.array_equal(got[1], want1))
        self.assertTrue(np.array_equal(got[2], _models.additive(x)))  # blocks left the data as it was
        self.assertTrue(np.array_equal(got[3], want1))
        self.assertEqual(len(got[4]), 0)
        self.assertTrue(np.array_equal(got[5], expected(_models.additive, x2, b2)))

    def test_repeated_blocks(self):
        # Draws of one test cover the same cells: the working copy is
        # restored only before a block of other cells, never seen by predict.
        x = _models.data(5, 6, 10, seed=6)
        rng = np.random.default_rng(3)
        same = [(0, 5, [1, 2], 4, 8, rng.normal(size=(5, 2, 5))) for _ in range(3)]
        other = [(1, 4, [3], 0, 2, rng.normal(size=(3, 1, 3))), (0, 5, [1, 2], 4, 8, rng.normal(size=(5, 2, 5)))]
        first, got = serve([resident(x), block_request(same), block_request(other), block_request(same[:1])],
                           _models.additive)
        self.assertIsNone(first)
        self.assertTrue(np.array_equal(got[1], expected(_models.additive, x, same)))
        self.assertTrue(np.array_equal(got[2], expected(_models.additive, x, other)))
        self.assertTrue(np.array_equal(got[3], expected(_models.additive, x, same[:1])))

    def test_missing_values_reach_predict(self):
        x = _models.data(3, 6, 10, seed=5)
        x[1, 2, 3] = np.nan
        seen = []

        def predict(batch):
            seen.append(int(np.isnan(batch).sum()))
            return np.zeros(len(batch))

        vals = np.full((1, 1, 2), np.nan)
        first, got = serve([request(b"TMPQ", x), resident(x), block_request([(0, 1, [0], 0, 1, vals)])], predict)
        self.assertIsNone(first)
        self.assertEqual(seen, [1, 2])

    def test_predict_error_in_a_block(self):
        x = _models.data(3, 6, 10, seed=5)

        def predict(batch):
            if np.isnan(batch).any():
                raise ValueError("cannot take NaN")
            return np.zeros(len(batch))

        vals = np.full((1, 1, 1), np.nan)
        first, got = serve([resident(x), block_request([(0, 1, [0], 0, 0, vals)]),
                            block_request([(0, 1, [0], 0, 0, vals * 0)])], predict)
        self.assertIsInstance(first, ValueError)
        self.assertEqual(got[1], "predict raised ValueError: cannot take NaN")
        self.assertEqual(got[2], "not evaluated: predict raised ValueError: cannot take NaN")

    def test_hostile_frames(self):
        x = _models.data(2, 2, 3, seed=1)
        ok = (0, 1, [0], 0, 0, np.zeros((1, 1, 1)))
        head = [resident(x)]

        def raw(k, r, v, where=0, offset=0, rest=b""):
            return struct.pack("<4sIIIIIQ", b"TMPP", 2, k, r, v, where, offset) + rest

        for frames, why in [
            ([block_request([ok])], "before any resident data"),
            ([resident(x, version=1)], "protocol version 1, want 2"),
            ([resident(x, version=3)], "protocol version 3, want 2"),
            ([struct.pack("<4sIIIIIQ", b"TMPD", 2, 1 << 20, 1 << 10, 1 << 10, 0, 0)], "unusable shape"),
            ([struct.pack("<4sIIIIIQ", b"TMPD", 2, 1, 1, 1, 1, 0)], "do not fit the shared buffer"),
            ([struct.pack("<4sIIIIIQ", b"TMPD", 2, 1, 1, 1, 4, 0)], "unknown value source 4"),
            ([struct.pack("<4sIIIIIQ", b"TMPD", 2, 1, 1, 1, 0, 8)], "offset 8"),
            (head + [block_request([ok], version=1)], "protocol version 1, want 2"),
            (head + [block_request([ok], version=3)], "protocol version 3, want 2"),
            (head + [raw(0, 1, 1)], "0 blocks"),
            (head + [raw(1 << 30, 1 << 30, 1 << 30)], "blocks, want 1 to"),
            (head + [raw(2, 1, 2)], "announces 1 rows"),
            (head + [raw(1, 1, 0xFFFFFFFF)], "values, want"),
            (head + [raw(1, 1, 1, where=7)], "unknown value source 7"),
            (head + [raw(1, 1, 1, offset=8)], "offset 8"),
            (head + [raw(1, 1, 1, where=1)], "do not fit the shared buffer"),
            (head + [raw(1, 2, 2, rest=struct.pack("<5I", 1, 3, 0, 0, 1))], r"rows \[1, 3\)"),
            (head + [raw(1, 1, 1, rest=struct.pack("<5I", 0, 1, 2, 3, 1))], r"timesteps \[2, 3\]"),
            (head + [raw(1, 1, 1, rest=struct.pack("<5I", 0, 1, 0, 0, 0))], "0 features"),
            (head + [raw(1, 1, 1, rest=struct.pack("<6I", 0, 1, 0, 0, 1, 2))], "feature 2"),
            (head + [raw(1, 1, 2, rest=struct.pack("<7I", 0, 1, 0, 0, 2, 1, 1))], "twice"),
            (head + [raw(1, 2, 1, rest=struct.pack("<6I", 0, 1, 0, 0, 1, 0))], "the header announced 2 and 1"),
        ]:
            with self.subTest(why=why):
                src, sink = io.BytesIO(b"".join(frames)), io.BytesIO()
                with self.assertRaisesRegex(_protocol.ProtocolError, why):
                    _protocol.serve_stream(_models.additive, src.readinto, sink.write)
                # The model side answered with the reason before stopping.
                self.assertRegex(answers(sink.getvalue()[28:])[-1], why)
        for frames in ([resident(x)[:-5]], head + [block_request([ok])[:-3]], head + [raw(2, 2, 2, rest=struct.pack("<6I", 0, 1, 0, 0, 1, 0))]):
            with self.subTest(cut=len(frames[-1])), self.assertRaisesRegex(_protocol.ProtocolError, "input ended"):
                _protocol.serve_stream(_models.additive, io.BytesIO(b"".join(frames)).readinto, io.BytesIO().write)


class ClientTest(unittest.TestCase):
    def test_version_one_refused(self):
        # A model side of version 1 sends an 8-byte hello and waits: the
        # Client refuses it from those 8 bytes (reading more would fail
        # here with end of input), saying how to upgrade it.
        with self.assertRaisesRegex(_protocol.ProtocolError, "protocol version 1, which this package no longer serves.*procmodel.Serve"):
            _protocol.Client(io.BytesIO(), io.BytesIO(struct.pack("<4sI", b"TMPH", 1)))

    def test_unknown_version(self):
        for v in (3, 4):
            with self.subTest(version=v), self.assertRaisesRegex(_protocol.ProtocolError, "version %d; this package speaks version 2" % v):
                _protocol.Client(io.BytesIO(), io.BytesIO(struct.pack("<4sI", b"TMPH", v)))

    def test_missing_values_reach_the_model(self):
        x = _models.data(2, 6, 10)
        x[1, 2, 3] = np.nan
        answer = struct.pack("<4sII", b"TMPR", 0, 2) + np.zeros(2).tobytes()
        r, w = io.BytesIO(_protocol.HELLO + answer), io.BytesIO()
        _protocol.Client(w, r).predict(x)
        sent = w.getvalue()
        self.assertEqual(struct.unpack_from("<4sIIII", sent), (b"TMPQ", 2, 2, 6, 10))
        self.assertEqual(int(np.isnan(np.frombuffer(sent, "<f8", offset=20)).sum()), 1)


class MaxBatchTest(unittest.TestCase):
    def test_max_batch_does_not_change_the_explanation(self):
        X = _models.data(120, seed=8)
        y = _models.additive(X) + np.random.default_rng(2).normal(scale=0.3, size=120)
        sizes = []

        def predict(batch):
            sizes.append(len(batch))
            return _models.additive(batch)

        want = tempora.explain(_models.additive, X, y, task="regression", seed=2, permutations=20)
        got = tempora.explain(predict, X, y, task="regression", seed=2, permutations=20, max_batch=50)
        self.assertLessEqual(max(sizes), 50)
        a, b = got.to_dict(), want.to_dict()
        for d in (a, b):
            d["accounting"]["runtime_seconds"] = 0
            d["accounting"]["model_calls"] = 0
        self.assertEqual(a, b)
        with self.assertRaisesRegex(tempora.TemporaError, r"max_batch=-1: want 0"):
            tempora.explain(_models.additive, X, y, task="regression", max_batch=-1)


if __name__ == "__main__":
    unittest.main()
