"""What the example's tests share: where they are (this folder goes on
sys.path, for the example's modules), the tempora binary they run, and
whether PyTorch and that binary are here (tests that need them skip with
NO_TORCH or NO_BINARY)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

BINARY = os.path.abspath(os.environ.get("TEMPORA") or os.path.join(ROOT, "bin", "tempora"))
HAVE_BINARY = os.access(BINARY, os.X_OK)
NO_TORCH = "PyTorch is not installed (Debian: apt-get install python3-torch)"
NO_BINARY = "no tempora binary at %s (make build)" % BINARY
