"""Tests of integrated_gradients.py (make test-learned):

    cd examples/pytorch && TEMPORA=../../bin/tempora /usr/bin/python3 -m unittest -v test_integrated_gradients

Skipped, saying so, without PyTorch, pandas or the tempora binary.
"""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from _testenv import BINARY, HAVE_BINARY, HAVE_TORCH, HERE, NO_BINARY, NO_TORCH, ROOT

if HAVE_TORCH:
    import torch
    from torch import nn

    import integrated_gradients as ig


@unittest.skipUnless(HAVE_TORCH, NO_TORCH)
class IntegratedGradientsTest(unittest.TestCase):
    def test_linear_model_is_exact(self):
        """For f(x) = <w, x> the gradient is w everywhere, so the
        attributions are (x - baseline) * w exactly (up to float32)."""
        torch.manual_seed(0)
        w = torch.randn(3, 5)

        class Linear(nn.Module):
            def forward(self, x):
                return (x * w).sum(dim=(1, 2))

        rng = np.random.default_rng(1)
        x, b = rng.normal(size=(4, 3, 5)), rng.normal(size=(3, 5))
        got = ig.integrated_gradients(Linear(), x, b, steps=8)
        np.testing.assert_allclose(got, (x - b) * w.numpy(), rtol=1e-5, atol=1e-5)

    def test_completeness(self):
        """Attributions sum to f(x) - f(baseline) as the path integral's
        Riemann sum converges: for a smooth net with 256 steps the error is
        O(1/steps) times the curvature, well below 0.02 here."""
        torch.manual_seed(0)
        net = nn.Sequential(nn.Flatten(), nn.Linear(15, 8), nn.Tanh(), nn.Linear(8, 1), nn.Flatten(0))
        rng = np.random.default_rng(2)
        x, b = rng.normal(size=(6, 3, 5)), np.zeros((3, 5))
        a = ig.integrated_gradients(net, x, b, steps=256)
        with torch.no_grad():
            fx = net(torch.as_tensor(x, dtype=torch.float32)).numpy()
            fb = net(torch.zeros(1, 3, 5)).numpy()
        np.testing.assert_allclose(a.sum(axis=(1, 2)), fx - fb, atol=0.02)

    @unittest.skipUnless(HAVE_BINARY, NO_BINARY)
    def test_benchmark_smoke(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas is not installed (Debian: apt-get install python3-pandas)")
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([sys.executable, os.path.join(HERE, "integrated_gradients.py"), "--models", "1",
                                "--instances", "10", "--epochs", "2", "--compare", "OCC", "--dir", tmp,
                                "--tempora", BINARY], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("IG", r.stdout)
            self.assertIn("instance-timestep-auprc", r.stdout)
            self.assertTrue(os.path.isfile(os.path.join(tmp, "report", "index.md")))


if __name__ == "__main__":
    unittest.main()
