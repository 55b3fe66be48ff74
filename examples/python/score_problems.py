#!/usr/bin/env python3
"""Benchmark an explanation method written in Python against tempora's.

The method here is mean occlusion: each feature-timestep cell in turn is
replaced by its mean over the instances, and its score is the increase in
mean loss. It sees each problem's data, task and black-box model (predict,
served by tempora), never the ground truth. The tempora package does the
rest (python/ in the repository, used from the source tree when it is not
installed; pandas from Debian's python3-pandas):

    python3 examples/python/score_problems.py --suite table1 --quick --models 2

tempora.problems writes the suite's problems; tempora.evaluate runs the
method on each, scores its outputs against the truth, runs the compared
built-in methods on the same problems, and returns the comparison as a
DataFrame (mean and standard error over models of every metric). The
records and the report stay in --dir (runs/ext, builtin, report).

Usage:
    python3 score_problems.py [--suite S] [--quick] [--models N] [--seed N]
        [--grid SPEC] [--compare M1,M2] [--dir DIR] [--tempora PATH]
"""

import argparse
import os
import sys

import numpy as np

try:
    import tempora
except ImportError:  # not installed: the package of this source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import tempora


def mean_loss(task, y, pred):
    """Mean squared error, or binary cross-entropy with clipped probabilities."""
    if task == "classification":
        p = np.clip(pred, 1e-12, 1 - 1e-12)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return float(np.mean((y - pred) ** 2))


def occlusion(problem):
    """Mean occlusion scores of a problem: a features x timesteps array."""
    x, y = problem.X, problem.y
    _, d, l = x.shape
    base = mean_loss(problem.task, y, problem.predict(x))
    cells = np.zeros((d, l))
    for j in range(d):
        for t in range(l):
            occluded = x.copy()
            occluded[:, j, t] = x[:, j, t].mean()
            cells[j, t] = mean_loss(problem.task, y, problem.predict(occluded)) - base
    return cells


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="table1")
    ap.add_argument("--quick", action="store_true", help="the suite's quick scale")
    ap.add_argument("--models", type=int, default=None, help="models per setting (default: the suite's)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--grid", default=None, help="the grid suite's sweep")
    ap.add_argument("--compare", default=None, help="built-in methods to compare (default: the suite's)")
    ap.add_argument("--dir", default=None, help="where problems, records and report go (default: a temporary one)")
    ap.add_argument("--tempora", default=None, help="the tempora program (default: $TEMPORA, else tempora on PATH)")
    args = ap.parse_args()

    with tempora.problems(args.suite, quick=args.quick, models=args.models, seed=args.seed, grid=args.grid,
                          dir=args.dir, binary=args.tempora) as probs:
        compare = args.compare.split(",") if args.compare is not None else None
        df = tempora.evaluate(probs, occlusion, method="ext", compare=compare)
    metrics = ["feature-power", "feature-fdr", "timestep-auroc", "timestep-auprc"]
    print(df[[c for m in metrics for c in (m, m + "_se")]].to_string(float_format="%.3f"))
    print("records and report in", probs.dir, file=sys.stderr)


if __name__ == "__main__":
    main()
