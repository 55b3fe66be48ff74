#!/usr/bin/env python3
"""TIME on a synthetic problem's model served from Python, with 1 and with N
model processes (tempora.explain's model_procs).

The model is the problem's own (evaluated through ``tempora serve``), padded
with a busy-wait to a fixed cost per batch: --per-1000 milliseconds per 1000
instances (25 by default, about what the authors' synthetic model costs when
served from Python). The problem has Table 1's shape unless --problem is
given: 1000 instances, 10 features, 20 timesteps, half relevant,
classification, seed 1.

    TEMPORA=bin/tempora python3 python/bench/model_procs.py [--procs 1,2]

It prints one line per process count (wall time, model calls, speed-up over
the first count) and checks that the explanations are identical.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import tempora  # noqa: E402


class PaddedProblemModel:
    """The problem's model, taking at least per_1000 ms per 1000 instances.
    Picklable: each process opens its own ``tempora serve``."""

    def __init__(self, path, per_1000_ms):
        self.path, self.per_instance = path, per_1000_ms / 1e6
        self.problem = None

    def __getstate__(self):
        return {"path": self.path, "per_instance": self.per_instance, "problem": None}

    def __call__(self, batch):
        end = time.perf_counter() + self.per_instance * len(batch)
        if self.problem is None:
            self.problem = tempora.Problem(self.path)
        out = self.problem.predict(batch)
        while time.perf_counter() < end:
            pass
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", help="synthetic problem directory (default: a Table 1 problem, seed 1)")
    ap.add_argument("--per-1000", type=float, default=25.0, help="model cost in ms per 1000 instances")
    ap.add_argument("--procs", default="1,2", help="comma-separated model process counts")
    ap.add_argument("--seed", type=int, default=1, help="TIME's seed")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.problem
        if path is None:
            path = os.path.join(tmp, "table1")
            subprocess.run([tempora.find_binary(), "synth", "-out", path, "-instances", "1000", "-features", "10",
                            "-timesteps", "20", "-relevant", "0.5", "-task", "classification", "-noise", "auto",
                            "-seed", "1"], check=True, capture_output=True)
        p = tempora.Problem(path)
        model = PaddedProblemModel(path, args.per_1000)
        print("problem %s (%d x %d x %d, %s), model %.3g ms per 1000 instances"
              % (path, p.X.shape[0], p.X.shape[1], p.X.shape[2], p.task, args.per_1000))
        first, base = None, None
        for n in [int(k) for k in args.procs.split(",")]:
            start = time.perf_counter()
            e = tempora.explain(model, p.X, p.y, task=p.task, seed=args.seed, model_procs=n)
            wall = time.perf_counter() - start
            doc = e.to_dict()
            doc["accounting"]["runtime_seconds"] = 0
            doc = json.dumps(doc, sort_keys=True)
            if first is None:
                first, base = doc, wall
            same = "identical" if doc == first else "DIFFERENT"
            print("model_procs=%d: %.1f s wall, %d model calls, speed-up %.2fx over model_procs=%s, explanation %s"
                  % (n, wall, e.accounting.model_calls, base / wall, args.procs.split(",")[0], same))
            if doc != first:
                sys.exit(1)


if __name__ == "__main__":
    main()
