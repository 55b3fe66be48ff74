"""Progress of tempora.explain: the program's machine-readable progress
lines (``-progress json`` on its standard error) shown with tqdm when it is
installed, or as a line on sys.stderr every few seconds otherwise."""

import json
import sys
import time
from typing import Any, List, Optional

#: Seconds between the plain lines shown without tqdm.
LINE_EVERY = 5.0


def _count(v: float) -> str:
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e4)):
        if v >= size:
            return "%.3g%s" % (v / (1e3 if unit == "k" else size), unit)
    return "%d" % v


def _seconds(s: float) -> str:
    s = int(round(s))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return ("%dh%02dm%02ds" % (h, m, sec)) if h else ("%dm%02ds" % (m, sec)) if m else ("%ds" % sec)


class Progress:
    """Reads the program's standard error lines: progress lines update the
    display, warnings are shown on sys.stderr; line() tells whether it took
    the line (so that it is neither kept for error messages nor echoed)."""

    def __init__(self, method: str, enabled: bool = True, echoed: bool = False) -> None:
        """echoed: the program's standard error is copied to sys.stderr
        anyway (verbose=True), so warnings are not shown twice."""
        self.method, self.enabled, self.echoed = method, enabled, echoed
        self._bar: Any = None
        self._tqdm: Any = None
        self._last_line = 0.0
        #: The run's estimates of its cost ({"estimate": ...} lines).
        self.estimates: List[Any] = []
        if enabled:
            try:
                from tqdm import tqdm
                self._tqdm = tqdm
            except ImportError:
                self._tqdm = None

    def line(self, text: str) -> bool:
        if text.startswith("tempora: warning: ") and not self.echoed:
            try:
                sys.stderr.write(text + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            return False  # kept for the error message too
        if text.startswith("tempora: warning: "):
            return False
        if text.startswith('{"estimate":'):
            return self._estimate(text)
        if not text.startswith('{"progress":'):
            return False
        try:
            p = json.loads(text)["progress"]
            evals, total, exact = int(p["evals"]), int(p["total"]), bool(p["exact"])
            elapsed, done = float(p["elapsed"]), bool(p.get("done", False))
        except (ValueError, KeyError, TypeError):
            return False
        if self.enabled:
            try:
                self._show(evals, total, exact, elapsed, done)
            except (OSError, ValueError):
                pass
        return True

    def _estimate(self, text: str) -> bool:
        from ._explanation import Estimate
        try:
            e = json.loads(text)["estimate"]
            est = Estimate(after=str(e["after"]), model_calls=float(e["model_calls"]),
                           instance_evaluations=float(e["instance_evaluations"]),
                           seconds_per_instance=float(e["seconds_per_instance"]), seconds_left=float(e["seconds_left"]))
        except (ValueError, KeyError, TypeError):
            return False
        self.estimates.append(est)
        if self.enabled:
            msg = "tempora: %s: estimate after the %s: at most %s model calls and %s instance evaluations in all, " \
                  "at most %s left at %.3g ms per instance" % (
                      self.method, est.after, _count(est.model_calls), _count(est.instance_evaluations),
                      _seconds(est.seconds_left), 1e3 * est.seconds_per_instance)
            try:
                if self._bar is not None and self._tqdm is not None:
                    self._tqdm.write(msg, file=sys.stderr)
                else:
                    sys.stderr.write(msg + "\n")
                    sys.stderr.flush()
            except (OSError, ValueError):
                pass
        return True

    def _show(self, evals: int, total: int, exact: bool, elapsed: float, done: bool) -> None:
        if self._tqdm is not None:
            if self._bar is None:
                desc = self.method if exact or total <= 0 else "%s (bound)" % self.method
                self._bar = self._tqdm(total=total if total > 0 else None, desc=desc, unit="eval", unit_scale=True,
                                       file=sys.stderr, leave=True, dynamic_ncols=True)
            bar = self._bar
            if done and not exact:
                bar.total = evals  # the bound was not reached: the run is complete
            bar.update(max(0, evals - bar.n))
            if done:
                self.close()
            return
        now = time.monotonic()
        if not done and now - self._last_line < LINE_EVERY:
            return
        self._last_line = now
        if total > 0:
            of, left = ("of", "left") if exact else ("of at most", "left at most")
            eta = "?" if evals == 0 else _seconds(elapsed / evals * max(total - evals, 0))
            msg = "%s: %s %s %s instance evaluations (%.1f%%), %s elapsed, %s %s" % (
                self.method, _count(evals), of, _count(total), 100.0 * evals / total, _seconds(elapsed), eta, left)
        else:
            msg = "%s: %s instance evaluations, %s elapsed" % (self.method, _count(evals), _seconds(elapsed))
        if done:
            msg = "%s: done: %s instance evaluations in %s" % (self.method, _count(evals), _seconds(elapsed))
        sys.stderr.write("tempora: " + msg + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.close()

    def bar(self) -> Optional[Any]:
        """The tqdm bar while one is shown (for tests)."""
        return self._bar
