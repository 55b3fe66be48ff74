"""Models of several outputs per instance (docs/protocol.md): the model side
announces K in its hello (serve(predict, outputs=K)), predict returns an
(M, K) array, and every answer carries the M·K predictions row by row; a
model of one output sends exactly the frames it always did."""

import io
import mmap
import struct
import unittest

import numpy as np

import tempora
from tempora import _protocol

import _models
from test_protocol import answers, request
from test_protocol_blocks import block_request, expected, random_blocks, resident


def horizons(batch):
    """Three horizons: feature 1's last value, twice feature 3's first, and
    their sum."""
    a, b = batch[:, 1, -1], 2.0 * batch[:, 3, 0]
    return np.stack([a, b, a + b], axis=1)


def serve_k(frames, predict, outputs, shared=None, held=None):
    src, sink = io.BytesIO(b"".join(frames)), io.BytesIO()
    first = _protocol.serve_stream(predict, src.readinto, sink.write, shared=shared, held=held, outputs=outputs)
    data = sink.getvalue()
    n = 28 if outputs == 1 else 32
    return first, data[:n], answers(data[n:])


class OutputsTest(unittest.TestCase):
    def test_hello(self):
        self.assertEqual(_protocol.hello(None, 3), struct.pack("<4sIIIIIII", b"TMPH", 2, 2, 0, 0, 0, 0, 3))
        self.assertEqual(_protocol.hello(None, 1), _protocol.HELLO)
        x = _models.data(4, 6, 10, seed=1)
        held = _protocol.hello(x, 5)
        self.assertEqual(struct.unpack_from("<I", held, 8)[0], 3)  # H and O
        self.assertEqual(held[12:28], _protocol.hello(x)[12:28])
        self.assertEqual(struct.unpack_from("<I", held, 28)[0], 5)
        for bad in (0, -1, 1.5, True, _protocol.MAX_OUTPUTS + 1, "3"):
            with self.subTest(outputs=bad), self.assertRaisesRegex(ValueError, "outputs must be an integer"):
                _protocol.hello(None, bad)

    def test_requests_and_blocks(self):
        x = _models.data(5, 6, 10, seed=2)
        shared = mmap.mmap(-1, 1 << 16)
        shared[:x.nbytes] = x.astype("<f8").tobytes()
        b = random_blocks(x, 3)
        frames = [request(b"TMPQ", x), request(b"TMPM", x), resident(x), block_request(b),
                  block_request(b, shared=shared, offset=8192)]
        first, hello, got = serve_k(frames, horizons, 3, shared)
        self.assertIsNone(first)
        self.assertEqual(hello, _protocol.hello(None, 3))
        want = horizons(x).ravel()
        self.assertTrue(np.array_equal(got[0], want))
        self.assertTrue(np.array_equal(got[1], want))
        self.assertEqual(len(got[2]), 0)
        rows = [horizons(w) for w in self._applied(x, b)]
        self.assertTrue(np.array_equal(got[3], np.concatenate(rows).ravel()))
        self.assertTrue(np.array_equal(got[4], got[3]))

    @staticmethod
    def _applied(x, blocks):
        for lo, hi, feats, s, e, vals in blocks:
            w = x.copy()
            w[lo:hi, feats, s:e + 1] = vals
            yield w[lo:hi]

    def test_held(self):
        x = _models.data(6, 6, 10, seed=3)
        b = random_blocks(x, 4)
        first, hello, got = serve_k([block_request(b), request(b"TMPQ", x)], horizons, 3, held=x.copy())
        self.assertIsNone(first)
        self.assertEqual(hello, _protocol.hello(x, 3))
        self.assertTrue(np.array_equal(got[0], np.concatenate([horizons(w) for w in self._applied(x, b)]).ravel()))
        self.assertTrue(np.array_equal(got[1], horizons(x).ravel()))

    def test_one_output_unchanged(self):
        x = _models.data(5, 6, 10, seed=5)
        b = random_blocks(x, 6)
        first, hello, got = serve_k([request(b"TMPQ", x), resident(x), block_request(b)], _models.additive, 1)
        self.assertEqual(hello, _protocol.HELLO)
        self.assertTrue(np.array_equal(got[0], _models.additive(x)))
        self.assertTrue(np.array_equal(got[2], expected(_models.additive, x, b)))

    def test_wrong_shape_is_an_error_answer(self):
        x = _models.data(4, 6, 10, seed=7)
        for predict, shape in ((_models.additive, r"\(4,\)"), (lambda b: horizons(b)[:, :2], r"\(4, 2\)"),
                               (lambda b: horizons(b).T, r"\(3, 4\)")):
            with self.subTest(shape=shape):
                first, _, got = serve_k([request(b"TMPQ", x)], predict, 3)
                self.assertIsInstance(first, ValueError)
                self.assertRegex(got[0], "shape " + shape + " for a batch of 4 instances of a model of 3 outputs; want \\(4, 3\\)")

    def test_fortran_order_answer(self):
        x = _models.data(4, 6, 10, seed=8)
        first, _, got = serve_k([request(b"TMPQ", x)], lambda b: np.asfortranarray(horizons(b)), 3)
        self.assertIsNone(first)
        self.assertTrue(np.array_equal(got[0], horizons(x).ravel()))

    def test_hostile_requests(self):
        # A request or block request whose answer would hold more than
        # 2**31 predictions is refused before anything is read or
        # predicted.
        k = 4
        huge = struct.pack("<4sIIII", b"TMPQ", 2, (1 << 31) // k + 1, 1, 1)
        with self.assertRaises(tempora.ProtocolError):
            serve_k([huge], horizons, k)
        src, sink = io.BytesIO(huge), io.BytesIO()
        with self.assertRaises(tempora.ProtocolError):
            _protocol.serve_stream(horizons, src.readinto, sink.write, outputs=k)
        self.assertIn(b"instances x 4 outputs, more than", sink.getvalue())
        x = _models.data(2, 6, 10)
        rows = (1 << 31) // k + 1
        blocks = block_request([], header=(1, rows, 1, 0, 0))
        src, sink = io.BytesIO(resident(x) + blocks), io.BytesIO()
        with self.assertRaises(tempora.ProtocolError):
            _protocol.serve_stream(horizons, src.readinto, sink.write, outputs=k)
        self.assertIn(b"announces %d rows, want 1 to %d" % (rows, (1 << 31) // k), sink.getvalue())

    def test_client(self):
        x = _models.data(2, 6, 10)
        pred = np.arange(6.0)
        answer = struct.pack("<4sII", b"TMPR", 0, 6) + pred.astype("<f8").tobytes()
        c = _protocol.Client(io.BytesIO(), io.BytesIO(_protocol.hello(None, 3) + answer))
        self.assertEqual(c.outputs, 3)
        got = c.predict(x)
        self.assertEqual(got.shape, (2, 3))
        self.assertTrue(np.array_equal(got, pred.reshape(2, 3)))
        # One output: a vector, as always.
        answer = struct.pack("<4sII", b"TMPR", 0, 2) + np.zeros(2).tobytes()
        c = _protocol.Client(io.BytesIO(), io.BytesIO(_protocol.HELLO + answer))
        self.assertEqual((c.outputs, c.predict(x).shape), (1, (2,)))
        # A model of three outputs answering one prediction per instance.
        c = _protocol.Client(io.BytesIO(), io.BytesIO(_protocol.hello(None, 3) + answer))
        with self.assertRaisesRegex(tempora.ProtocolError, "2 predictions for 2 instances x 3 outputs"):
            c.predict(x)

    def test_client_refuses_bad_hellos(self):
        head = struct.pack("<4sI", b"TMPH", 2)
        for rest, want in ((struct.pack("<5I", 4, 0, 0, 0, 0), "flags 4"),
                           (struct.pack("<6I", 2, 0, 0, 0, 0, 1), "K = 1"),
                           (struct.pack("<6I", 2, 0, 0, 0, 0, _protocol.MAX_OUTPUTS + 1), "want 2 to"),
                           (struct.pack("<5I", 2, 1, 1, 1, 0), "holds no data"),
                           (struct.pack("<5I", 2, 0, 0, 0, 0), "before the end of its hello frame \\(K outputs\\)")):
            with self.subTest(want=want):
                with self.assertRaisesRegex((tempora.ProtocolError, EOFError), want):
                    _protocol.Client(io.BytesIO(), io.BytesIO(head + rest))


if __name__ == "__main__":
    unittest.main()
