"""The tests' rule for optional packages (pandas, torch, scikit-learn,
matplotlib): a test that needs one is skipped where it is not installed,
but runs (and fails on the missing import) under CI, which installs it."""

import os
import unittest

CI = os.environ.get("CI") == "true"


def need(flag, what):
    """Skip without the package (flag false), but fail under CI, which
    installs it."""
    if flag or CI:
        return lambda f: f
    return unittest.skip("%s is not installed" % what)
