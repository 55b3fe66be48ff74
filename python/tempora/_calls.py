"""Calls of the user's predict from tempora.explain: bounded by model_timeout
and ended by KeyboardInterrupt, with an exception that names the call.

With a time limit (model_timeout, or the program's default of 10 minutes
when it is None), predict runs in one helper thread of this process (the
same thread for every batch of an explain call) while the calling thread
waits, so that the wait can end: when the limit passes, ModelTimeoutError;
on KeyboardInterrupt (Ctrl-C), ModelInterrupt. Python gives no way to stop
a thread, so a predict that never returns is left running in that thread (a
daemon thread: it does not keep the interpreter from exiting); the
exception says so. With model_timeout=0 (no limit) predict runs in the
calling thread, as thread-local settings may require, and a
KeyboardInterrupt inside it becomes ModelInterrupt too.
"""

import re
import threading
from typing import Any, Callable, Optional, Tuple

from ._binary import ModelError

# The program's default -model-timeout, in seconds (tempora explain -h).
DEFAULT_TIMEOUT = 600.0


class ModelTimeoutError(ModelError):
    """predict did not return within model_timeout on a batch."""


class ModelInterrupt(KeyboardInterrupt):
    """A KeyboardInterrupt during a call of predict. It is a
    KeyboardInterrupt, so code that handles Ctrl-C handles it."""


_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def seconds(value: Any) -> float:
    """model_timeout in seconds: a number of seconds, a timedelta, or a
    duration string as the program takes it ("90s", "10m", "1h30m", "0");
    None for the program's default. Raises ValueError for other strings."""
    if value is None:
        return DEFAULT_TIMEOUT
    if hasattr(value, "total_seconds"):
        return float(value.total_seconds())
    if isinstance(value, str):
        text = value.strip()
        if text in ("0", "+0", "-0"):
            return 0.0
        sign = -1.0 if text.startswith("-") else 1.0
        body = text.lstrip("+-")
        pos, total = 0, 0.0
        while pos < len(body):
            m = _PART.match(body, pos)
            if m is None:
                raise ValueError("model_timeout %r: want seconds or a duration such as '90s' or '10m'" % value)
            total += float(m.group(1)) * _UNITS[m.group(2)]
            pos = m.end()
        if not body:
            raise ValueError("model_timeout %r: want seconds or a duration such as '90s' or '10m'" % value)
        return sign * total
    return float(value)


def describe(name: str, batch: Any) -> str:
    """'predict on a batch of 50 instances (50 × 6 × 10)'."""
    shape = getattr(batch, "shape", None)
    if shape is not None and len(shape) == 3:
        return "%s on a batch of %d instances (%d \u00d7 %d \u00d7 %d)" % ((name, shape[0]) + tuple(shape))
    return "%s on a batch of %d instances" % (name, len(batch))


def _limit(timeout: float) -> str:
    return ("%gs" % timeout) if timeout < 60 else ("%gm" % (timeout / 60.0))


class _Helper:
    """The helper thread of a Guard and its two hand-off locks: the caller
    releases go after setting job, the thread releases done after setting
    result. Plain locks hand a call over in about 15 µs where a
    threading.Condition takes about 70 µs, which counts when a model is
    called thousands of times on small batches."""

    def __init__(self) -> None:
        self.go = threading.Lock()
        self.go.acquire()
        self.done = threading.Lock()
        self.done.acquire()
        self.job: Optional[Callable[[], Any]] = None
        self.result: Optional[Tuple[bool, Any]] = None
        self.stop = False  # abandoned or closed: serve no further call
        self.thread = threading.Thread(target=self._serve, name="tempora-predict", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            self.go.acquire()
            if self.stop:
                return
            job, self.job = self.job, None
            assert job is not None
            result: Tuple[bool, Any]
            try:
                result = (True, job())
            except BaseException as exc:  # handed to the caller
                result = (False, exc)
            del job
            self.result = result
            self.done.release()
            if self.stop:
                return  # abandoned during the call: nobody waits


class Guard:
    """predict, called with a time limit (seconds; 0 for none) and turned
    into a clear exception on a time-out or a KeyboardInterrupt."""

    def __init__(self, predict: Any, timeout: float, name: str = "predict") -> None:
        self.predict = predict
        self.timeout = timeout
        self.name = name
        self._helper: Optional[_Helper] = None

    def __call__(self, batch: Any) -> Any:
        return self.run(lambda: self.predict(batch), batch)

    def run(self, job: Callable[[], Any], batch: Any) -> Any:
        """Run job(), which calls self.predict (once, or once per block of
        a block request), as one guarded call: in the helper thread with
        the time limit, or here without one. batch names the call in
        messages."""
        if not self.timeout or self.timeout <= 0:
            try:
                return job()
            except KeyboardInterrupt as exc:
                raise ModelInterrupt("KeyboardInterrupt during %s" % describe(self.name, batch)) from exc
        h = self._helper
        if h is None:
            h = self._helper = _Helper()
        h.job = job
        h.go.release()
        try:
            # A lock's acquire with a time-out is interruptible by Ctrl-C.
            if not h.done.acquire(timeout=min(self.timeout, threading.TIMEOUT_MAX)):
                self._abandon()
                raise ModelTimeoutError(
                    "%s did not return within model_timeout=%s; it is left running in a background thread "
                    "(Python cannot stop a thread), and tempora.explain stopped"
                    % (describe(self.name, batch), _limit(self.timeout)))
        except KeyboardInterrupt as exc:
            self._abandon()
            raise ModelInterrupt(
                "KeyboardInterrupt during %s; the call is left running in a background thread "
                "(Python cannot stop a thread)" % describe(self.name, batch)) from exc
        result, h.result = h.result, None
        assert result is not None
        ok, value = result
        if ok:
            return value
        raise value

    def _abandon(self) -> None:
        """Leave the running call to its thread, which ends when it
        returns: no further call is made (explain stops at the first
        error)."""
        if self._helper is not None:
            self._helper.stop = True
            self._helper = None

    def close(self) -> None:
        """Stop the helper thread, which is idle unless a call was
        abandoned (then it ends when predict returns)."""
        h, self._helper = self._helper, None
        if h is not None:
            h.stop = True
            h.go.release()
            h.thread.join(5)


def reraise(first: Optional[BaseException]) -> None:
    """Raise first if it is one of this module's exceptions (so that
    explain raises it as it is, not as a ModelError about it)."""
    if isinstance(first, (ModelTimeoutError, ModelInterrupt)):
        raise first
