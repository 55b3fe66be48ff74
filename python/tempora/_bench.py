"""Benchmarking an explanation method written in Python against tempora's
methods, on a suite's synthetic problems.

    import tempora
    probs = tempora.problems(suite="table1", quick=True, models=3)
    df = tempora.evaluate(probs, my_method, method="mine")

problems() writes the suite's problems with ``tempora problems``; each
BenchProblem offers the data, the task and a predict callable served by
``tempora serve``, and keeps its ground truth apart (truth() reads it on
request). evaluate() runs the method on every problem (or takes its
outputs), writes the outputs beside the problems, turns them into records
with ``tempora evaluate -problems``, runs the built-in methods compared
with ``tempora run`` on the same problems, reports both with ``tempora
report``, and returns the comparison as a pandas DataFrame.
"""

import json
import math
import os
import tempfile
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

from ._binary import StrPath, run
from ._files import load_npy, npy_bytes, read_json, write_atomic
from ._problem import TruthFeature, _ModelServer, truth_features

if TYPE_CHECKING:
    import pandas


class BenchProblem(_ModelServer):
    """One problem of a suite as a method under test sees it.

    Attributes:
        path: the problem's directory.
        X: the data, float64 array of shape (instances, features, timesteps).
        y: the targets, shape (instances,).
        task: "regression" or "classification".
        feature_names: the features' names ("0", "1", ...).
        suite, params, model, seed: the problem's identity in records.
        calls, evaluations: model calls and instances predicted so far.

    predict(batch) (also problem(batch)) evaluates the black-box model;
    numpy_model() and torch_model() are the same model as a NumPy function
    and a differentiable PyTorch module, for gradient methods. The
    ground truth is not an attribute: truth() reads it, for analyses after
    the benchmark.
    """

    def __init__(self, root: str, entry: Dict[str, Any], suite: str, binary: Optional[StrPath] = None) -> None:
        self.path: str = os.path.join(root, *str(entry["dir"]).split("/"))
        self._binary = binary
        self.suite = suite
        self.params: Dict[str, str] = {p["key"]: p["value"] for p in entry.get("params") or []}
        self.model: int = int(entry["model"])
        self.seed: int = int(entry["seed"])
        self.task: str = str(entry["task"])
        self.X: "npt.NDArray[np.float64]" = load_npy(os.path.join(self.path, "data.npy"))
        self.y: "npt.NDArray[np.float64]" = load_npy(os.path.join(self.path, "targets.npy"))
        if self.X.shape != (entry["instances"], entry["features"], entry["timesteps"]):
            raise ValueError("%s: data of shape %s, the index says %s" % (
                self.path, self.X.shape, (entry["instances"], entry["features"], entry["timesteps"])))
        self.feature_names: List[str] = [str(j) for j in range(self.X.shape[1])]
        self.calls = 0
        self.evaluations = 0
        self._init_server()

    def predict(self, batch: npt.ArrayLike) -> "npt.NDArray[np.float64]":
        """The model's predictions for batch (m x features x timesteps):
        probabilities of class 1 or values."""
        out = super().predict(batch)
        self.calls += 1
        self.evaluations += len(out)
        return out

    __call__ = predict

    def truth(self) -> List[TruthFeature]:
        """The problem's ground truth (its truth.json), one TruthFeature per
        feature. A method under test must not call it."""
        return truth_features(read_json(os.path.join(self.path, "truth.json"), "a truth file"))

    def __repr__(self) -> str:
        setting = ",".join("%s=%s" % kv for kv in self.params.items())
        return "<BenchProblem %s/%s/model=%d: %s, %d x %d x %d>" % (
            self.suite, setting, self.model, self.task, self.X.shape[0], self.X.shape[1], self.X.shape[2])


#: A method's output on one problem: global cell scores (features x
#: timesteps) or per-instance attributions (instances x features x
#: timesteps, for the problem's first instances; instances x outputs x
#: features x timesteps for a model of several outputs).
Output = npt.ArrayLike

#: A method under test: called with each problem, returns its Output.
MethodFunc = Callable[[BenchProblem], Output]


class ProblemSet(Sequence[BenchProblem]):
    """The problems of a suite, as tempora problems writes them into dir (a
    sequence of BenchProblem, in the suite's order). evaluate() benchmarks a
    method on them; close() ends the problems' model servers."""

    def __init__(self, dir: StrPath, binary: Optional[StrPath] = None, grid: Optional[str] = None) -> None:
        self.dir = os.fspath(dir)
        self._binary = binary
        self.problem_index: Dict[str, Any] = read_json(os.path.join(self.dir, "problems", "index.json"),
                                                       "a problem index")
        self.suite: str = self.problem_index["suite"]
        self.quick: bool = bool(self.problem_index["quick"])
        self.seed: int = int(self.problem_index["seed"])
        self.models: int = int(self.problem_index["models"])
        self.grid: Optional[str] = self.problem_index.get("grid") or grid
        # Settings that share data share a directory, and one problem.
        self._problems: List[BenchProblem] = []
        seen: Dict[str, BenchProblem] = {}
        for e in self.problem_index["problems"]:
            if e["dir"] not in seen:
                seen[e["dir"]] = BenchProblem(os.path.join(self.dir, "problems"), e, self.suite, binary)
                self._problems.append(seen[e["dir"]])

    @overload
    def __getitem__(self, i: int) -> BenchProblem: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[BenchProblem]: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[BenchProblem, Sequence[BenchProblem]]:
        return self._problems[i]

    def __len__(self) -> int:
        return len(self._problems)

    def __iter__(self) -> Iterator[BenchProblem]:
        return iter(self._problems)

    def close(self) -> None:
        """End every problem's model server."""
        for p in self._problems:
            p.close()

    def __enter__(self) -> "ProblemSet":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _flags(self) -> List[str]:
        args = ["-suite", self.suite, "-models", str(self.models), "-seed", str(self.seed)]
        if self.quick:
            args.append("-quick")
        if self.grid:
            args += ["-grid", self.grid]
        return args

    def evaluate(self, outputs: Union[MethodFunc, Sequence[Output]], method: str = "mine",
                 compare: Optional[Sequence[str]] = None, mode: Optional[str] = None,
                 workers: Optional[int] = None, verbose: bool = False) -> "pandas.DataFrame":
        """Benchmark a method on the problems against tempora's methods;
        see tempora.evaluate."""
        import pandas as pd  # only the benchmark needs pandas

        outs: List[Output]
        accounting: List[Dict[str, float]] = []
        if callable(outputs):
            outs = []
            for p in self._problems:
                c0, e0, t0 = p.calls, p.evaluations, time.perf_counter()
                outs.append(outputs(p))
                accounting.append({"runtime_seconds": time.perf_counter() - t0,
                                   "model_calls": p.calls - c0, "instance_evaluations": p.evaluations - e0})
        else:
            outs = list(outputs)
            if len(outs) != len(self._problems):
                raise ValueError("%d outputs for %d problems" % (len(outs), len(self._problems)))
            accounting = [{"runtime_seconds": 0, "model_calls": 0, "instance_evaluations": 0}] * len(outs)
        kinds = set()
        scores_name, attr_name = method + ".scores.json", method + ".attributions.npy"
        for p, out, acc in zip(self._problems, outs, accounting):
            a = np.asarray(out, dtype=np.float64)
            _, d, l = p.X.shape
            if a.ndim in (3, 4) and a.shape[-2:] == (d, l) and 1 <= a.shape[0] <= p.X.shape[0]:
                # The whole model's cells: the mean magnitude over the
                # instances (and outputs); the program scores the rest.
                cells = np.abs(a).mean(axis=tuple(range(a.ndim - 2)))
                write_atomic(os.path.join(p.path, attr_name), npy_bytes(a))
                kinds.add(3)
            elif a.shape == (d, l):
                cells = a
                kinds.add(2)
            else:
                raise ValueError("%r: output of shape %s; want features x timesteps %s, instances x features x "
                                 "timesteps (at most %d instances) or instances x outputs x features x timesteps"
                                 % (p, a.shape, (d, l), p.X.shape[0]))
            if not np.all(np.isfinite(a)):
                raise ValueError("%r: the output has non-finite values" % (p,))
            write_atomic(os.path.join(p.path, scores_name),
                         json.dumps({"cells": cells.tolist(), "accounting": acc}).encode("utf-8"))
        if len(kinds) > 1:
            raise ValueError("the outputs mix cell scores and per-instance attributions")
        runs = os.path.join(self.dir, "runs")
        mine = os.path.join(runs, method)
        args = ["evaluate", "-problems", os.path.join(self.dir, "problems"), "-scores", scores_name,
                "-method", method, "-out", mine]
        if kinds == {3}:
            args += ["-attributions", attr_name]
        if mode is not None:
            args += ["-mode", mode]
        run(args, binary=self._binary, verbose=verbose)
        ins = [mine]
        if compare is None or len(compare) > 0:
            builtin = os.path.join(self.dir, "builtin")
            args = ["run"] + self._flags() + ["-out", builtin]
            if compare is not None:
                args += ["-methods", ",".join(compare)]
            if workers is not None:
                args += ["-workers", str(workers)]
            run(args, binary=self._binary, verbose=verbose)
            ins.append(builtin)
        report = os.path.join(self.dir, "report")
        run(["report", "-in", ",".join(ins), "-out", report], binary=self._binary, verbose=verbose)
        table = pd.read_csv(os.path.join(report, "tables", "suite-%s.csv" % self.suite), dtype={"method": str})
        return comparison(table)


def comparison(table: "pandas.DataFrame") -> "pandas.DataFrame":
    """The DataFrame of a report's suite table (tables/suite-SUITE.csv): one
    row per setting and method, with models, the median runtime, and for
    every metric its mean over models and the standard error of that mean
    (column METRIC_se: SD / sqrt(n))."""
    import pandas as pd

    metrics = [c[:-len("_mean")] for c in table.columns
               if c.endswith("_mean") and c[:-len("_mean")] + "_n" in table.columns]
    fixed = ["suite", "model_calls_mean", "instance_evals_mean", "incomplete", "runtime_mean_s", "runtime_sd_s"]
    keys = [c for c in table.columns[:list(table.columns).index("method")] if c not in fixed]
    out = pd.DataFrame({k: table[k].astype(str) for k in keys})
    out["method"] = table["method"]
    out["models"] = table["models"]
    out["runtime_s"] = table["runtime_median_s"]
    for m in metrics:
        n = table[m + "_n"].astype(float)
        out[m] = table[m + "_mean"]
        out[m + "_se"] = [sd / math.sqrt(k) if k > 1 else float("nan") for sd, k in zip(table[m + "_sd"], n)]
    return out.set_index(keys + ["method"]) if keys else out.set_index("method")


def problems(suite: str = "table1", *, models: Optional[int] = None, quick: bool = True, seed: Optional[int] = None,
             grid: Optional[str] = None, dir: Optional[StrPath] = None,
             binary: Optional[StrPath] = None) -> ProblemSet:
    """The problems of a tempora suite (``tempora problems``), exactly those
    ``tempora run`` analyses with the same suite, models, scale, seed and
    grid, written into dir/problems (default: a new temporary directory,
    kept, so that its report can be read afterwards). Rerunning with the
    same dir keeps the problems written."""
    if dir is None:
        dir = tempfile.mkdtemp(prefix="tempora-bench-")
    d = os.fspath(dir)
    args = ["problems", "-suite", suite, "-out", os.path.join(d, "problems")]
    if models is not None:
        args += ["-models", str(models)]
    if quick:
        args.append("-quick")
    if seed is not None:
        args += ["-seed", str(seed)]
    if grid is not None:
        args += ["-grid", grid]
    run(args, binary=binary)
    return ProblemSet(d, binary=binary, grid=grid)
