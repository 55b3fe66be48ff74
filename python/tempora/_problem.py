"""tempora.Problem: a synthetic problem written by ``tempora synth``."""

import json
import os
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import Tuple

import numpy as np

from . import _protocol
from ._binary import StderrTail, TemporaError, find_binary, run
from ._explain import option_flags
from ._explanation import Explanation


@dataclass(frozen=True)
class TruthFeature:
    """The generating truth of one feature of a synthetic problem."""

    index: int
    name: str
    relevant: bool  # the model uses the feature
    window: Tuple[int, int]  # (start, end), inclusive: where it is used
    effect_size: float
    ordering_important: bool  # the order of its values over the sequence matters
    window_ordering_important: bool  # the order within its window matters


class Problem:
    """A synthetic problem directory (data.npy, targets.npy, model.json,
    truth.json, problem.json), loaded with its ground truth.

    Attributes:
        path: the directory.
        X: the data, float64 array of shape (instances, features, timesteps).
        y: the targets, shape (instances,).
        task: "regression" or "classification".
        truth: one TruthFeature per feature, in index order.
        config: the generator configuration (problem.json's "config").
        seed: the generator seed.

    predict(batch) (also problem(batch)) evaluates the problem's model
    through a long-lived ``tempora serve -problem DIR`` process, started on
    first use; close() ends it (a Problem is also a context manager).
    explain(...) explains the problem's model with the program directly.
    """

    def __init__(self, path, binary=None):
        self.path = os.fspath(path)
        self._binary = binary

        def load_json(name):
            p = os.path.join(self.path, name)
            try:
                with open(p, encoding="utf-8") as f:
                    return json.load(f)
            except FileNotFoundError:
                raise FileNotFoundError("%s: not a synthetic problem directory (no %s; see tempora synth)"
                                        % (self.path, name)) from None

        truth = load_json("truth.json")
        self.info = load_json("problem.json")
        self.config = self.info.get("config", {})
        self.seed = self.info.get("seed")
        self.task = truth["task"]
        self.X = np.load(os.path.join(self.path, "data.npy"))
        self.y = np.load(os.path.join(self.path, "targets.npy"))
        self.truth = [TruthFeature(
            index=int(f["index"]), name=f["name"], relevant=bool(f["relevant"]),
            window=(int(f["window"][0]), int(f["window"][1])), effect_size=float(f["effect_size"]),
            ordering_important=bool(f["ordering_important"]),
            window_ordering_important=bool(f["window_ordering_important"]),
        ) for f in truth["features"]]
        if self.X.ndim != 3 or self.X.shape[1] != len(self.truth) or self.y.shape != (self.X.shape[0],):
            raise ValueError("%s: data %s, targets %s and %d truth features disagree"
                             % (self.path, self.X.shape, self.y.shape, len(self.truth)))
        self._lock = threading.Lock()
        self._proc = None
        self._client = None
        self._tail = None

    @property
    def feature_names(self):
        return [f.name for f in self.truth]

    @property
    def relevant(self):
        """Names of the features the model uses."""
        return [f.name for f in self.truth if f.relevant]

    def _start(self):
        exe = find_binary(self._binary)
        self._proc = subprocess.Popen([exe, "serve", "-problem", self.path], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._tail = StderrTail(self._proc.stderr)
        try:
            self._client = _protocol.Client(self._proc.stdin, self._proc.stdout)
        except (EOFError, OSError, _protocol.ProtocolError) as exc:
            self._fail(exc)

    def _fail(self, exc):
        proc, tail = self._proc, self._tail
        self._stop(kill=True)
        tail.join()
        msg = tail.error_message(proc.returncode) if proc.returncode else str(exc)
        raise TemporaError("tempora serve -problem %s: %s" % (self.path, msg)) from None

    def predict(self, batch):
        """The model's predictions for batch, an array of shape (m,
        features, timesteps): probabilities of class 1 or values."""
        with self._lock:
            if self._client is None:
                self._start()
            try:
                return self._client.predict(batch)
            except (EOFError, OSError, _protocol.ProtocolError) as exc:
                self._fail(exc)
            except RuntimeError as exc:  # an error answer: the model rejected the batch
                raise TemporaError("tempora serve -problem %s: %s" % (self.path, exc)) from None

    __call__ = predict

    def explain(self, method="time", *, verbose=False, **options):
        """Explain the problem's model on its data with the program
        (``tempora explain -problem DIR``); options as for tempora.explain
        (permutations, alpha, gamma, seed, workers, hierarchy as a path, and
        method flags)."""
        with tempfile.TemporaryDirectory(prefix="tempora-") as tmp:
            json_path = os.path.join(tmp, "explanation.json")
            report = run(["explain", "-problem", self.path, "-method", str(method), "-json", json_path]
                         + option_flags(options), binary=self._binary, verbose=verbose)
            with open(json_path, "rb") as f:
                return Explanation(f.read().decode("utf-8"), report=report)

    def _stop(self, kill=False, timeout=5.0):
        proc = self._proc
        self._proc = self._client = None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()  # end of input: the server exits
            except OSError:
                pass
        if kill:
            proc.kill()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def close(self):
        """End the model server, if running."""
        with self._lock:
            self._stop()
            if self._tail is not None:
                self._tail.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if self._proc is not None:
                self._stop(kill=True)
        except Exception:
            pass

    def __repr__(self):
        return "<Problem %s: %s, %d x %d x %d, relevant %s>" % (
            self.path, self.task, self.X.shape[0], self.X.shape[1], self.X.shape[2], self.relevant)
