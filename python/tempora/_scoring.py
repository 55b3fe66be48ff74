"""Scoring explanations against a synthetic problem's ground truth, with the
benchmark's rules (docs/decisions.md, decision 14)."""

import json
import os
import tempfile
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

from ._binary import StrPath, run
from ._explanation import Explanation

if TYPE_CHECKING:
    import pandas

    from ._bench import MethodFunc, Output, ProblemSet

#: Scores to evaluate: an Explanation, a features x timesteps matrix of cell
#: scores from any tool, or instances x features x timesteps per-instance
#: attributions (of the problem's first instances).
Scores = Union[Explanation, npt.ArrayLike]

# Magnitudes below this count as zero (decision 14); test_scoring checks it
# against the program's own rule.
_NEAR_ZERO = 1e-10


@overload
def evaluate(problem: StrPath, scores: Scores, method: Optional[str] = None, mode: Optional[str] = None,
             binary: Optional[StrPath] = None) -> Dict[str, float]: ...


@overload
def evaluate(problem: "ProblemSet", scores: "Union[MethodFunc, Sequence[Output]]", method: Optional[str] = None,
             mode: Optional[str] = None, binary: Optional[StrPath] = None, *,
             compare: Optional[Sequence[str]] = None, workers: Optional[int] = None,
             verbose: bool = False) -> "pandas.DataFrame": ...


def evaluate(problem: "Union[StrPath, ProblemSet]", scores: Any, method: Optional[str] = None,
             mode: Optional[str] = None, binary: Optional[StrPath] = None, *,
             compare: Optional[Sequence[str]] = None, workers: Optional[int] = None,
             verbose: bool = False) -> "Union[Dict[str, float], pandas.DataFrame]":
    """Score a method's output against the ground truth of synthetic
    problems, with the benchmark's metrics.

    On one problem (problem a directory written by tempora synth or
    tempora problems; scores an Explanation, a D x L matrix of cell scores,
    or an M x D x L array of per-instance attributions for the first M
    instances): ``tempora evaluate``'s metrics (feature and timestep power
    and FDR, AUROC and AUPRC, and for attributions the per-instance metrics
    of docs/records.md) as a dict from metric name to value.

    On a suite (problem a ProblemSet from tempora.problems; scores a
    function called with each BenchProblem that returns its output, or one
    output per problem): the benchmark. The outputs become records of the
    method (default name "mine"), tempora's methods compare (default: the
    suite's methods; () for none) run on the same problems, and the result
    is the report's comparison as a pandas DataFrame: one row per method
    (and setting), the mean of every metric over the models and its
    standard error (column METRIC_se), the models and the median runtime
    in seconds. Records and report stay below the set's dir (runs/METHOD,
    builtin, report), so ``tempora report`` can redraw them.

    method names the method the scores come from (default: the
    explanation's); a method the program knows is scored with its own
    selection rule and tests, any other name with the baselines' top-n rule.
    mode ("top-n" or "all-non-zero") overrides the selection rule.
    """
    from ._bench import ProblemSet  # a late import: _bench imports this module's users

    if isinstance(problem, ProblemSet):
        return problem.evaluate(scores, method=method or "mine", compare=compare, mode=mode, workers=workers,
                                verbose=verbose)
    attributions = None
    if isinstance(scores, Explanation):
        text = scores.to_json()
        if method is None:
            method = scores.method
    else:
        cells = np.asarray(scores, dtype=np.float64)
        if cells.ndim == 3:
            attributions = cells
            text = None
        elif cells.ndim == 2:
            text = json.dumps({"cells": cells.tolist()})
        else:
            raise ValueError("scores must be an Explanation, a features x timesteps matrix or instances x features x "
                             "timesteps attributions, got shape %s" % (cells.shape,))
    with tempfile.TemporaryDirectory(prefix="tempora-") as tmp:
        args = ["evaluate", "-problem", os.fspath(problem), "-json"]
        if text is not None:
            path = os.path.join(tmp, "scores.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            args += ["-scores", path]
        if attributions is not None:
            path = os.path.join(tmp, "attributions.npy")
            np.save(path, attributions)
            args += ["-attributions", path]
        if method is not None:
            args += ["-method", method]
        if mode is not None:
            args += ["-mode", mode]
        out = run(args, binary=binary)
    metrics: Dict[str, float] = json.loads(out)  # as the program prints them (1, not 1.0)
    return metrics


def feature_scores(cells: npt.ArrayLike) -> "npt.NDArray[np.float64]":
    """Each feature's score from a D x L matrix of cell scores, as the
    benchmark computes it (decision 14): the mean magnitude of the
    feature's cells that are at least 1e-10 in magnitude, 0 when none is.
    (The feature scores of tempora's baselines are these.)"""
    a = np.abs(np.asarray(cells, dtype=np.float64))
    if a.ndim != 2:
        raise ValueError("cells must be a features x timesteps matrix, got shape %s" % (a.shape,))
    a[~(a >= _NEAR_ZERO)] = 0.0
    nz = (a > 0).sum(axis=1)
    s: "npt.NDArray[np.float64]" = np.where(nz > 0, a.sum(axis=1) / np.maximum(nz, 1), 0.0)
    return s


def top_features(cells: npt.ArrayLike, k: int) -> List[int]:
    """The k features with the highest feature_scores (ties to the lower
    index), in index order."""
    s = feature_scores(cells)
    order = sorted(range(len(s)), key=lambda j: (-s[j], j))
    return sorted(order[:k])
