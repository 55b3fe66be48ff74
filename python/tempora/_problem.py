"""tempora.Problem: a synthetic problem written by ``tempora synth``."""

import os
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, NoReturn, Optional, Tuple, TypeVar

import numpy as np
import numpy.typing as npt

from . import _protocol
from ._binary import StderrTail, StrPath, TemporaError, find_binary, run
from ._explain import _own_flags
from ._explanation import Explanation
from ._files import load_npy, read_json
from ._methods import command_flags, method_table
from ._scoring import Scores, evaluate_problem
from ._synthmodel import SynthModel


_S = TypeVar("_S", bound="_ModelServer")


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


def truth_features(truth: Dict[str, Any]) -> List[TruthFeature]:
    """The features of a parsed truth.json (written by tempora synth)."""
    return [TruthFeature(
        index=int(f["index"]), name=f["name"], relevant=bool(f["relevant"]),
        window=(int(f["window"][0]), int(f["window"][1])), effect_size=float(f["effect_size"]),
        ordering_important=bool(f["ordering_important"]),
        window_ordering_important=bool(f["window_ordering_important"]),
    ) for f in truth["features"]]


class _ModelServer:
    """The model of a synthetic problem directory (self.path), served by a
    long-lived ``tempora serve -problem DIR`` process started on first use:
    predict(batch) (also self(batch)), close(), a context manager; and
    read from its model.json: numpy_model(), torch_model()."""

    path: str
    _binary: Optional[StrPath]

    def _init_server(self) -> None:
        self._lock = threading.Lock()
        self._proc: Optional["subprocess.Popen[bytes]"] = None
        self._client: Optional[_protocol.Client] = None
        self._tail: Optional[StderrTail] = None

    def _start(self) -> _protocol.Client:
        exe = find_binary(self._binary)
        proc = subprocess.Popen([exe, "serve", "-problem", self.path], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self._tail = StderrTail(proc.stderr)
        try:
            self._client = _protocol.Client(proc.stdin, proc.stdout)
        except (EOFError, OSError, _protocol.ProtocolError) as exc:
            self._fail(exc)
        return self._client

    def _fail(self, exc: BaseException) -> NoReturn:
        proc, tail = self._proc, self._tail
        self._stop(kill=True)
        msg = str(exc)
        if tail is not None:
            tail.join()
            if proc is not None and proc.returncode:
                msg = tail.error_message(proc.returncode)
        raise TemporaError("tempora serve -problem %s: %s" % (self.path, msg)) from None

    def predict(self, batch: npt.ArrayLike) -> "npt.NDArray[np.float64]":
        """The model's predictions for batch, an array of shape (m,
        features, timesteps): probabilities of class 1 or values, (m, K)
        for a model of K outputs."""
        with self._lock:
            client = self._client if self._client is not None else self._start()
            try:
                return client.predict(batch)
            except (EOFError, OSError, _protocol.ProtocolError) as exc:
                self._fail(exc)
            except RuntimeError as exc:  # an error answer: the model rejected the batch
                raise TemporaError("tempora serve -problem %s: %s" % (self.path, exc)) from None

    __call__ = predict

    def numpy_model(self) -> SynthModel:
        """The problem's model as a NumPy function (a SynthModel, read from
        its model.json): model(batch) equals predict(batch) to 1e-9 and
        starts no program."""
        return SynthModel.read(self.path)

    def torch_model(self) -> Any:
        """The problem's model as a torch.nn.Module computing in float64,
        equal to predict to 1e-9 and differentiable in its input (for
        integrated gradients or saliency: tempora.gradients). Needs
        PyTorch."""
        return SynthModel.read(self.path).torch()

    def _stop(self, kill: bool = False, timeout: float = 5.0) -> None:
        proc = self._proc
        self._proc = self._client = None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
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

    def close(self) -> None:
        """End the model server, if running."""
        with self._lock:
            self._stop()
            if self._tail is not None:
                self._tail.join()

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if self._proc is not None:
                self._stop(kill=True)
        except Exception:
            pass


class Problem(_ModelServer):
    """A synthetic problem directory (data.npy, targets.npy, model.json,
    truth.json, problem.json), loaded with its ground truth.

    Attributes:
        path: the directory.
        X: the data, float64 array of shape (instances, features, timesteps).
        y: the targets, shape (instances,): values, labels 0/1, or for a
            model of K classes labels 0 to K-1; (instances, K) for a model
            of K horizons or output steps (NaN: no target).
        task: "regression" or "classification".
        truth: one TruthFeature per feature, in index order.
        config: the generator configuration (problem.json's "config").
        seed: the generator seed.

    predict(batch) (also problem(batch)) evaluates the problem's model
    through a long-lived ``tempora serve -problem DIR`` process, started on
    first use; close() ends it (a Problem is also a context manager).
    explain(...) explains the problem's model with the program directly.
    """

    def __init__(self, path: StrPath, binary: Optional[StrPath] = None) -> None:
        self.path: str = os.fspath(path)
        self._binary = binary

        def load_json(name: str) -> Any:
            p = os.path.join(self.path, name)
            try:
                return read_json(p, "a problem's JSON file")
            except FileNotFoundError:
                raise FileNotFoundError("%s: not a synthetic problem directory (no %s; see tempora synth)"
                                        % (self.path, name)) from None

        truth = load_json("truth.json")
        self.info = load_json("problem.json")
        self.config: Dict[str, Any] = self.info.get("config", {})
        self.seed: Optional[int] = self.info.get("seed")
        self.task: str = truth["task"]
        self.X: "npt.NDArray[np.float64]" = load_npy(os.path.join(self.path, "data.npy"))
        self.y: "npt.NDArray[np.float64]" = load_npy(os.path.join(self.path, "targets.npy"))
        self.truth = truth_features(truth)
        if self.X.ndim != 3 or self.X.shape[1] != len(self.truth) or self.y.shape[:1] != (self.X.shape[0],) \
                or self.y.ndim > 2:
            raise ValueError("%s: data %s, targets %s and %d truth features disagree"
                             % (self.path, self.X.shape, self.y.shape, len(self.truth)))
        self._init_server()

    @property
    def feature_names(self) -> List[str]:
        return [f.name for f in self.truth]

    @property
    def relevant(self) -> List[str]:
        """Names of the features the model uses."""
        return [f.name for f in self.truth if f.relevant]

    def explain(self, method: Optional[str] = None, *, verbose: bool = False, **options: Any) -> Explanation:
        """Explain the problem's model on its data with the program
        (``tempora explain -problem DIR``); options as for tempora.explain
        (the method's parameters, seed, workers, hierarchy as a path)."""
        table = method_table(self._binary)
        m = table.lookup(method) if method is not None else table.default_method()
        with tempfile.TemporaryDirectory(prefix="tempora-") as tmp:
            json_path = os.path.join(tmp, "explanation.json")
            args = ["explain", "-problem", self.path, "-method", m.name, "-json", json_path]
            report = run(args + command_flags(table, m, options, _own_flags(args), "Problem.explain()"),
                         binary=self._binary, verbose=verbose)
            with open(json_path, "rb") as f:
                return Explanation(f.read().decode("utf-8"), report=report, tests=m.tests)

    def evaluate(self, scores: Scores, method: Optional[str] = None, mode: Optional[str] = None) -> Dict[str, float]:
        """Score an explanation (or a features x timesteps matrix of cell
        scores, or instances x features x timesteps per-instance
        attributions of the first instances, instances x outputs x features
        x timesteps for a model of several outputs) against the problem's
        ground truth with the benchmark's metrics: tempora.evaluate on this
        problem."""
        return evaluate_problem(self.path, scores, method=method, mode=mode, binary=self._binary)

    def __repr__(self) -> str:
        return "<Problem %s: %s, %d x %d x %d, relevant %s>" % (
            self.path, self.task, self.X.shape[0], self.X.shape[1], self.X.shape[2], self.relevant)
