#!/usr/bin/env python3
"""Score a tempora suite's problems with a method written in Python.

This is the whole loop for an explanation method that lives outside Go,
using only the standard library:

    tempora problems -suite table1 -quick -models 2 -out problems
    python3 examples/python/score_problems.py problems
    tempora evaluate -problems problems -scores ext.json -method ext -out ext-run
    tempora run -suite table1 -quick -models 2 -methods TIME -out run
    tempora report -in ext-run,run

"tempora problems" writes every problem of the suite (data.npy, targets.npy,
truth.json, ...) and problems/index.json. This script explains each problem
with mean occlusion (each feature-timestep cell in turn replaced by its mean
over the instances; its score is the increase in mean loss), querying the
problem's black-box model through "tempora serve -problem DIR", which speaks
the model protocol of docs/protocol.md on its standard input and output. It
writes DIR/ext.json: {"cells": D rows of L scores, "accounting": {...}}, the
score format "tempora evaluate" reads, with the cost it measured. The
evaluated records then sit beside a run of the same suite and seed, and the
report gives "ext" its own rows next to TIME.

The script never reads truth.json's ground truth: only its task.

Usage:
    python3 score_problems.py PROBLEMS_DIR [--tempora PATH] [--scores NAME]
"""

import argparse
import ast
import json
import math
import os
import struct
import subprocess
import sys
import time
from array import array

HELLO = struct.Struct("<4sI")              # magic, version
REQUEST = struct.Struct("<4sIIII")         # magic, version, M, D, L
ANSWER = struct.Struct("<4sII")            # magic, status, count
VERSION = 1


def read_npy(path):
    """Read a little-endian float64 C-order .npy file: (shape, array('d'))."""
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            raise ValueError("%s is not a .npy file" % path)
        major = f.read(2)[0]
        size = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))[0]
        header = ast.literal_eval(f.read(size).decode("latin1"))
        if header["descr"] != "<f8" or header["fortran_order"]:
            raise ValueError("%s: want little-endian float64 in C order, got %s" % (path, header))
        values = array("d")
        values.frombytes(f.read())
    if sys.byteorder != "little":
        values.byteswap()
    return tuple(header["shape"]), values


def little(values):
    """The bytes of an array('d') as little-endian float64."""
    if sys.byteorder != "little":
        values = array("d", values)
        values.byteswap()
    return values.tobytes()


class Model:
    """A problem's model, served by "tempora serve -problem DIR"."""

    def __init__(self, tempora, problem_dir):
        self.proc = subprocess.Popen([tempora, "serve", "-problem", problem_dir],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        magic, version = HELLO.unpack(self._read(HELLO.size))
        if magic != b"TMPH" or version != VERSION:
            raise RuntimeError("tempora serve: bad hello %r %d" % (magic, version))
        self.calls = 0
        self.evaluations = 0

    def _read(self, n):
        buf = self.proc.stdout.read(n)
        if len(buf) != n:
            raise RuntimeError("tempora serve stopped answering (exit status %s)" % self.proc.poll())
        return buf

    def predict(self, values, m, d, l):
        """Predictions for m instances of d features x l timesteps (row-major)."""
        self.proc.stdin.write(REQUEST.pack(b"TMPQ", VERSION, m, d, l))
        self.proc.stdin.write(little(values))
        self.proc.stdin.flush()
        magic, status, count = ANSWER.unpack(self._read(ANSWER.size))
        if magic != b"TMPR":
            raise RuntimeError("tempora serve: bad answer %r" % magic)
        if status != 0:
            raise RuntimeError("model error: " + self._read(count).decode("utf-8", "replace"))
        pred = array("d")
        pred.frombytes(self._read(8 * count))
        if sys.byteorder != "little":
            pred.byteswap()
        self.calls += 1
        self.evaluations += m
        return pred

    def close(self):
        self.proc.stdin.close()
        if self.proc.wait(timeout=30) != 0:
            raise RuntimeError("tempora serve exited with status %d" % self.proc.returncode)


def mean_loss(task, y, pred):
    """Mean squared error, or binary cross-entropy with clipped probabilities."""
    total = 0.0
    for t, p in zip(y, pred):
        if task == "classification":
            p = min(max(p, 1e-12), 1 - 1e-12)
            total -= t * math.log(p) + (1 - t) * math.log(1 - p)
        else:
            total += (t - p) ** 2
    return total / len(y)


def occlusion(model, x, shape, y, task):
    """Mean occlusion scores: a D x L list of lists."""
    m, d, l = shape
    base = mean_loss(task, y, model.predict(x, m, d, l))
    cells = []
    for j in range(d):
        row = []
        for t in range(l):
            idx = [(i * d + j) * l + t for i in range(m)]
            mean = sum(x[k] for k in idx) / m
            occluded = array("d", x)
            for k in idx:
                occluded[k] = mean
            row.append(mean_loss(task, y, model.predict(occluded, m, d, l)) - base)
        cells.append(row)
    return cells


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problems", help="directory written by tempora problems")
    ap.add_argument("--tempora", default="tempora", help="the tempora program (default: tempora on PATH)")
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
        shape, x = read_npy(os.path.join(d, "data.npy"))
        _, y = read_npy(os.path.join(d, "targets.npy"))
        with open(os.path.join(d, "truth.json")) as f:
            task = json.load(f)["task"]
        start = time.monotonic()
        model = Model(args.tempora, d)
        try:
            cells = occlusion(model, x, shape, y, task)
        finally:
            model.close()
        out = {"cells": cells, "accounting": {
            "runtime_seconds": time.monotonic() - start,
            "model_calls": model.calls, "instance_evaluations": model.evaluations}}
        with open(os.path.join(d, args.scores), "w") as f:
            json.dump(out, f)
        print("%s: %d x %d scores from %d model calls" % (entry["dir"], shape[1], shape[2], model.calls), file=sys.stderr)


if __name__ == "__main__":
    main()
