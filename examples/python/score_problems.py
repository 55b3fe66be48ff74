#!/usr/bin/env python3
"""Score a tempora suite's problems with a method written in Python.

This is the whole loop for an explanation method that lives outside Go,
in Python with NumPy and the tempora package (python/ in the repository,
used from the source tree when it is not installed):

    tempora problems -suite table1 -quick -models 2 -out problems
    python3 examples/python/score_problems.py problems
    tempora evaluate -problems problems -scores ext.json -method ext -out ext-run
    tempora run -suite table1 -quick -models 2 -methods TIME -out run
    tempora report -in ext-run,run

"tempora problems" writes every problem of the suite (data.npy, targets.npy,
truth.json, ...) and problems/index.json. This script explains each problem
with mean occlusion (each feature-timestep cell in turn replaced by its mean
over the instances; its score is the increase in mean loss), querying the
problem's black-box model through tempora.Problem, which runs "tempora
serve -problem DIR" and speaks the model protocol of docs/protocol.md. It
writes DIR/ext.json: {"cells": D rows of L scores, "accounting": {...}}, the
score format "tempora evaluate" reads, with the cost it measured. The
evaluated records then sit beside a run of the same suite and seed, and the
report gives "ext" its own rows next to TIME.

The script uses none of the ground truth tempora.Problem loads: only the
task.

Usage:
    python3 score_problems.py PROBLEMS_DIR [--tempora PATH] [--scores NAME]
"""

import argparse
import json
import os
import sys
import time

import numpy as np

try:
    import tempora
except ImportError:  # not installed: the package of this source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import tempora


class CountingModel:
    """A problem's model, counting the calls and instances it evaluates."""

    def __init__(self, problem):
        self.problem = problem
        self.calls = 0
        self.evaluations = 0

    def predict(self, batch):
        self.calls += 1
        self.evaluations += len(batch)
        return self.problem.predict(batch)


def mean_loss(task, y, pred):
    """Mean squared error, or binary cross-entropy with clipped probabilities."""
    if task == "classification":
        p = np.clip(pred, 1e-12, 1 - 1e-12)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return float(np.mean((y - pred) ** 2))


def occlusion(model, x, y, task):
    """Mean occlusion scores: a D x L list of lists."""
    _, d, l = x.shape
    base = mean_loss(task, y, model.predict(x))
    cells = []
    for j in range(d):
        row = []
        for t in range(l):
            occluded = x.copy()
            occluded[:, j, t] = x[:, j, t].mean()
            row.append(mean_loss(task, y, model.predict(occluded)) - base)
        cells.append(row)
    return cells


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problems", help="directory written by tempora problems")
    ap.add_argument("--tempora", default=None, help="the tempora program (default: $TEMPORA, else tempora on PATH)")
    ap.add_argument("--scores", default="ext.json", help="score file to write in each problem directory")
    args = ap.parse_args()

    with open(os.path.join(args.problems, "index.json")) as f:
        index = json.load(f)
    if index.get("format") != "tempora-problems/1":
        sys.exit("score_problems: %s/index.json has format %r" % (args.problems, index.get("format")))
    done = set()
    for entry in index["problems"]:
        d = os.path.join(args.problems, entry["dir"])
        if d in done:  # settings that analyse the same data share a directory
            continue
        done.add(d)
        start = time.monotonic()
        with tempora.Problem(d, binary=args.tempora) as problem:
            model = CountingModel(problem)
            cells = occlusion(model, problem.X, problem.y, problem.task)
        out = {"cells": cells, "accounting": {
            "runtime_seconds": time.monotonic() - start,
            "model_calls": model.calls, "instance_evaluations": model.evaluations}}
        with open(os.path.join(d, args.scores), "w") as f:
            json.dump(out, f)
        print("%s: %d x %d scores from %d model calls" % (entry["dir"], len(cells), len(cells[0]), model.calls),
              file=sys.stderr)


if __name__ == "__main__":
    main()
