"""A predict that writes into its batch (issue 33): every batch is
read-only, so the write raises an error that names it instead of changing
what later draws see, through the protocol, tempora.explain and
tempora.serve behind -model-cmd."""

import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np

import tempora
from tempora import _protocol

from test_protocol import request
from test_protocol_blocks import block_request, resident, serve

NAMED = "predict wrote into its batch, which is read-only"


def problem():
    """200 x 4 x 6, targets from features 0 and 1."""
    x = np.random.default_rng(0).standard_normal((200, 4, 6))
    return x, reads(x)


def reads(x):
    return x[:, 0].mean(axis=1) + x[:, 1].mean(axis=1)


def scribbles(x):
    """reads, then the batch used as scratch."""
    r = reads(x)
    x[...] = 0
    return r


def normalises(x):
    """In-place normalisation, then reads."""
    x -= 0.0
    return reads(x)


class ProtocolTest(unittest.TestCase):
    def test_every_batch_is_read_only(self):
        x = np.random.default_rng(1).standard_normal((3, 4, 5))
        vals = np.zeros((3, 1, 5))
        for frames in ([request(b"TMPQ", x)], [resident(x), block_request([(0, 3, [2], 0, 4, vals)])]):
            first, got = serve(frames, scribbles)
            self.assertIsInstance(first, ValueError)
            self.assertTrue(got[-1].startswith(NAMED), got[-1])
        # The resident data is unchanged: a later request sees it as it was.
        seen = []
        first, got = serve([resident(x), block_request([(0, 3, [2], 0, 4, vals)]),
                            block_request([(0, 3, [3], 0, 4, vals)])],
                           lambda b: seen.append(b.copy()) or np.zeros(len(b)))
        self.assertIsNone(first)
        want = x.copy()
        want[:, 3] = 0
        np.testing.assert_array_equal(seen[1], want)


class ExplainTest(unittest.TestCase):
    def test_a_write_is_named(self):
        x, y = problem()
        for predict in (scribbles, normalises):
            for kw in ({}, {"model_timeout": 0}, {"model_procs": 2, "mp_context": "fork"}):
                with self.subTest(predict=predict.__name__, **kw):
                    with self.assertRaises(tempora.ModelError) as cm:
                        tempora.explain(predict, x, y, task="regression", seed=1, progress=False, **kw)
                    self.assertIn(NAMED, str(cm.exception))

    def test_a_copy_explains_exactly_what_is_read(self):
        x, y = problem()
        e = tempora.explain(lambda b: scribbles(b.copy()), x, y, task="regression", seed=1, progress=False)
        self.assertEqual(e.important, ["0", "1"])

    def test_torch_module_of_float64(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        x, y = problem()

        class Reads(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))

            def forward(self, t):
                out = t[:, 0].mean(dim=1) + t[:, 1].mean(dim=1) + self.w
                t.zero_()  # a write into the tensor it was given
                return out

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            e = tempora.explain(Reads().eval(), x, y, task="regression", seed=1, progress=False)
        self.assertEqual(e.important, ["0", "1"])


SERVED = """
import sys
sys.path.insert(0, %r)
import tempora
from test_writes import scribbles
tempora.serve(scribbles)
"""


class ServeTest(unittest.TestCase):
    def test_a_write_is_named_behind_model_cmd(self):
        x, y = problem()
        with tempfile.TemporaryDirectory() as tmp:
            np.save(os.path.join(tmp, "x.npy"), x)
            np.save(os.path.join(tmp, "y.npy"), y)
            script = os.path.join(tmp, "model.py")
            with open(script, "w") as f:
                f.write(SERVED % os.path.dirname(os.path.abspath(__file__)))
            r = subprocess.run([tempora.find_binary(), "explain", "-data", os.path.join(tmp, "x.npy"),
                                "-targets", os.path.join(tmp, "y.npy"), "-task", "regression",
                                "-model-cmd", "%s %s" % (sys.executable, script)],
                               capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(NAMED, r.stderr)


if __name__ == "__main__":
    unittest.main()
