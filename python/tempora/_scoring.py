"""Scoring explanations against a synthetic problem's ground truth, with the
benchmark's rules (docs/decisions.md, decision 14)."""

import json
import os
import tempfile
from typing import Dict, List, Optional, Union

import numpy as np
import numpy.typing as npt

from ._binary import StrPath, run
from ._explanation import Explanation

#: Scores to evaluate: an Explanation, or a features x timesteps matrix of
#: cell scores from any tool.
Scores = Union[Explanation, npt.ArrayLike]

# Magnitudes below this count as zero (decision 14); test_scoring checks it
# against the program's own rule.
_NEAR_ZERO = 1e-10


def evaluate(problem: StrPath, scores: Scores, method: Optional[str] = None, mode: Optional[str] = None,
             binary: Optional[StrPath] = None) -> Dict[str, float]:
    """Score an explanation (or a D x L matrix of cell scores) against the
    ground truth of the synthetic problem in directory problem, with
    ``tempora evaluate``: the benchmark's metrics (feature and timestep
    power and FDR, ...) as a dict from metric name to value.

    method names the method the scores come from (default: the
    explanation's); a method the program knows is scored with its own
    selection rule and tests, any other name with the baselines' top-n rule.
    mode ("top-n" or "all-non-zero") overrides the selection rule.
    """
    if isinstance(scores, Explanation):
        text = scores.to_json()
        if method is None:
            method = scores.method
    else:
        cells = np.asarray(scores, dtype=np.float64)
        if cells.ndim != 2:
            raise ValueError("scores must be an Explanation or a features x timesteps matrix, got shape %s" % (cells.shape,))
        text = json.dumps({"cells": cells.tolist()})
    with tempfile.TemporaryDirectory(prefix="tempora-") as tmp:
        path = os.path.join(tmp, "scores.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        args = ["evaluate", "-problem", os.fspath(problem), "-scores", path, "-json"]
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
