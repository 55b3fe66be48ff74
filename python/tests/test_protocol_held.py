"""Data the model holds from the start (docs/protocol.md): the model side
says in its hello that it holds the data, tempora then sends no resident
data frame, and tempora.explain gives the same explanation with and without
it."""

import io
import struct
import unittest
import zlib
from unittest import mock

import numpy as np

import tempora
from tempora import _explain, _protocol

import _models
from test_protocol import answers, request
from test_protocol_blocks import block_request, expected, random_blocks, resident


def serve_held(frames, predict, held):
    src, sink = io.BytesIO(b"".join(frames)), io.BytesIO()
    first = _protocol.serve_stream(predict, src.readinto, sink.write, held=held)
    data = sink.getvalue()
    return first, data[:28], answers(data[28:])


class HeldTest(unittest.TestCase):
    def test_hello_describes_the_data(self):
        x = _models.data(4, 6, 10, seed=1)
        _, hello, _ = serve_held([], _models.additive, x.copy())
        magic, version, h, m, d, l, crc = struct.unpack("<4sIIIIII", hello)
        self.assertEqual((magic, version, h, m, d, l), (b"TMPH", 2, 1, 4, 6, 10))
        self.assertEqual(crc, zlib.crc32(x.astype("<f8").tobytes()))
        # The Go side's test (procmodel TestTensorCRC) pins the same value.
        self.assertEqual(_protocol.data_crc(np.array([0, 0.5, -1.0]).reshape(1, 1, 3)), 0x2ac987f2)
        self.assertEqual(_protocol.hello(None), struct.pack("<4sIIIIII", b"TMPH", 2, 0, 0, 0, 0, 0))
        self.assertEqual(_protocol.hello(None), _protocol.HELLO)

    def test_blocks_on_held_data_without_resident_frame(self):
        x = _models.data(6, 6, 10, seed=3)
        x2 = _models.data(5, 6, 10, seed=4)
        b1, b2 = random_blocks(x, 1), random_blocks(x2, 2)
        held = x.copy()
        frames = [block_request(b1), request(b"TMPQ", x), resident(x2), block_request(b2)]
        first, _, got = serve_held(frames, _models.additive, held)
        self.assertIsNone(first)
        self.assertTrue(np.array_equal(got[0], expected(_models.additive, x, b1)))
        self.assertTrue(np.array_equal(got[1], _models.additive(x)))
        self.assertEqual(len(got[2]), 0)  # the replacing resident data's acknowledgement
        self.assertTrue(np.array_equal(got[3], expected(_models.additive, x2, b2)))

    def test_not_holdable(self):
        x = _models.data(3, 6, 10, seed=1)
        for bad in (x.astype(np.float32), np.asfortranarray(x), x[:, :, ::2], x.reshape(3, 60)):
            with self.subTest(dtype=bad.dtype, shape=bad.shape), self.assertRaisesRegex(ValueError, "held must be"):
                serve_held([], _models.additive, bad)
        ro = x.copy()
        ro.flags.writeable = False
        self.assertFalse(_protocol.holdable(ro))

    def test_client_reads_a_hello_holding_data(self):
        answer = struct.pack("<4sII", b"TMPR", 0, 2) + np.zeros(2).tobytes()
        hello = _protocol.hello(_models.data(2, 6, 10))
        r, w = io.BytesIO(hello + answer), io.BytesIO()
        c = _protocol.Client(w, r)
        self.assertTrue(np.array_equal(c.predict(_models.data(2, 6, 10)), np.zeros(2)))
        self.assertEqual(struct.unpack_from("<I", w.getvalue(), 4)[0], 2)


class ExplainHeldTest(unittest.TestCase):
    def explain(self, X, y, hold, **kw):
        """tempora.explain, counting the resident data frames the model side
        receives; hold=False makes the package hold nothing."""
        frames = []
        real = _protocol._Resident.read

        def read(self, *a, **k):
            frames.append(1)
            return real(self, *a, **k)

        with mock.patch.object(_protocol._Resident, "read", read):
            if hold:
                ex = tempora.explain(_models.additive, X, y, task="regression", seed=4, permutations=30, **kw)
            else:
                with mock.patch.object(_explain, "_held", lambda path: None):
                    ex = tempora.explain(_models.additive, X, y, task="regression", seed=4, permutations=30, **kw)
        d = ex.to_dict()
        d["accounting"]["runtime_seconds"] = 0
        return d, len(frames)

    def test_same_explanation_with_and_without(self):
        X = _models.data(80, seed=9)
        y = _models.additive(X) + np.random.default_rng(1).normal(scale=0.3, size=80)
        X_before = X.copy()
        with_hold, sent_with = self.explain(X, y, True)
        without, sent_without = self.explain(X, y, False)
        self.assertEqual(sent_with, 0, "the program sent the data the model holds")
        self.assertEqual(sent_without, 1)
        self.assertEqual(with_hold, without)
        self.assertTrue(np.array_equal(X, X_before), "the caller's array was modified")
        # Some feature is found, so that the comparison is not of empty explanations.
        self.assertTrue(any(f["important"] for f in with_hold["features"]))

    def test_held_with_missing_values_max_batch_and_two_processes(self):
        X = _models.data(60, seed=2)
        X[3, 0, 2:] = np.nan  # feature 0 is not the model's: its predictions stay finite
        y = _models.additive(X) + np.random.default_rng(3).normal(scale=0.3, size=60)
        a, sent = self.explain(X, y, True, max_batch=25)
        b, _ = self.explain(X, y, False, max_batch=25)
        self.assertEqual(sent, 0)
        self.assertEqual(a, b)
        # The worker process maps the data file too (not counted here: it is
        # another process); the explanation does not change.
        c, _ = self.explain(X, y, True, max_batch=25, model_procs=2)
        c["accounting"]["model_calls"] = a["accounting"]["model_calls"]
        self.assertEqual(a, c)


if __name__ == "__main__":
    unittest.main()
