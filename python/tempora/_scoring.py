"""Scoring explanations against a synthetic problem's ground truth, with the
benchmark's rules (docs/decisions.md, decision 14), which the program owns:
evaluate_problem runs ``tempora evaluate``, feature_scores and top_features
read ``tempora rank -json`` (docs/errors.md, "Benchmark feature scores")."""

import json
import os
import tempfile
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._binary import StrPath, run
from ._explanation import Explanation

#: Scores to evaluate: an Explanation, a features x timesteps matrix of cell
#: scores from any tool, or instances x features x timesteps per-instance
#: attributions (of the problem's first instances), or for a model with
#: several outputs instances x outputs x features x timesteps.
Scores = Union[Explanation, npt.ArrayLike]


def evaluate_problem(problem: StrPath, scores: Any, method: Optional[str] = None, mode: Optional[str] = None,
                     binary: Optional[StrPath] = None) -> Dict[str, float]:
    """tempora.evaluate on one problem directory: ``tempora evaluate``'s
    metrics of scores (an Explanation, a D x L matrix of cell scores, or M
    x D x L per-instance attributions of the first M instances, M x K x D
    x L for a model of K outputs: each instance's attributions to each
    output, as captum's per-target attributions stacked on axis 1)."""
    attributions = None
    if isinstance(scores, Explanation):
        text = scores.to_json()
        if method is None:
            method = scores.method
    else:
        cells = np.asarray(scores, dtype=np.float64)
        if cells.ndim in (3, 4):
            attributions = cells  # the program checks the shape against the problem's
            text = None
        elif cells.ndim == 2:
            text = json.dumps({"cells": cells.tolist()})
        else:
            raise ValueError("scores must be an Explanation, a features x timesteps matrix, instances x features x "
                             "timesteps attributions or instances x outputs x features x timesteps attributions (a "
                             "model with several outputs), got shape %s" % (cells.shape,))
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


def _rank(cells: npt.ArrayLike, binary: Optional[StrPath]) -> Tuple["npt.NDArray[np.float64]", List[int]]:
    """The benchmark's feature scores of a D x L matrix of cell scores and
    its top-n order of the features, from ``tempora rank -json``."""
    a = np.asarray(cells, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError("cells must be a features x timesteps matrix, got shape %s" % (a.shape,))
    with tempfile.TemporaryDirectory(prefix="tempora-") as tmp:
        path = os.path.join(tmp, "cells.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"cells": a.tolist()}, f)
        doc = json.loads(run(["rank", "-scores", path, "-json"], binary=binary))
    scores: "npt.NDArray[np.float64]" = np.asarray(doc["feature_scores"], dtype=np.float64)
    return scores, [int(j) for j in doc["ranking"]]


def feature_scores(cells: npt.ArrayLike, binary: Optional[StrPath] = None) -> "npt.NDArray[np.float64]":
    """Each feature's score from a D x L matrix of cell scores, as the
    benchmark computes it (decision 14 of docs/decisions.md: the mean
    magnitude of the feature's cells that are at least 1e-10 in magnitude,
    0 when none is), computed by the program (``tempora rank``; binary as
    for tempora.explain). The feature scores of tempora's baselines are
    these. Scores must be finite."""
    return _rank(cells, binary)[0]


def top_features(cells: npt.ArrayLike, k: int, binary: Optional[StrPath] = None) -> List[int]:
    """The k features with the highest feature_scores (ties to the lower
    index), in index order: the benchmark's top-n selection for k up to
    the number of non-zero scores (``tempora rank``)."""
    return sorted(_rank(cells, binary)[1][:max(k, 0)])
