#!/usr/bin/env python3
"""Serve a temporal model to tempora over standard input and output.

tempora runs your model as a child process and sends it batches of
instances; the tempora Python package speaks that protocol
(docs/protocol.md), so that you only write a prediction function:

    from serve_model import serve             # keeps stdout for the protocol

    model = load_my_lstm("model.pt")          # load once, before serving

    def predict(batch):
        # batch: M x D x L (instances x features x timesteps), float64.
        # Return M predictions: probabilities of class 1 for
        # classification, real values for regression.
        return model(batch)

    serve(predict)

Then:

    tempora explain -data X.npy -targets y.npy -task classification \\
        -model-cmd "python3 my_server.py" -method time

The batch is a NumPy array of shape (M, D, L); predict may return any array
numpy.asarray accepts, of shape (M,) or (M, 1) (a PyTorch tensor is detached
first). A model of several outputs per instance (K class probabilities,
horizons or output steps; tempora explain -outputs KIND:K) is served with
serve(predict, outputs=K) and returns an array of shape (M, K). If predict
raises, the exception is sent to tempora, which stops with that error.

serve speaks version 2 of the protocol: a missing value reaches predict as
NaN (a model that cannot take NaN raises, and tempora shows its message), and
tempora sends the data once and then only the cells a permutation changes;
serve applies them to its own copy of the data before calling predict, so
predict sees whole batches as always.

Standard output carries the protocol, so importing this module claims it
(tempora.claim_stdout): everything else written there (print, C libraries
writing to file descriptor 1) goes to standard error. Import it before
loading a model that prints. serve is tempora.serve.

Run as a program, this file serves a demonstration model: the additive
windowed model of tempora's examples/gomodel, with the same options:

    python3 serve_model.py [--terms "feature:start:end:weight;..."]
                           [--bias B] [--task regression|classification]

It needs NumPy and the tempora package (python/ in the repository, used from
the source tree when it is not installed).
"""

import argparse
import math
import os
import sys

try:
    import tempora
except ImportError:  # not installed: the package of this source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import tempora

import numpy as np

tempora.claim_stdout()
serve = tempora.serve


# ---------------------------------------------------------------------------
# Demonstration model: the additive windowed model of tempora's
# internal/examplemodel (score = bias + sum_k weight_k * mean of feature_k
# over timesteps start_k..end_k; sigmoid for classification).

DEFAULT_TERMS = "0:10:19:1.5;3:0:4:-2;7:5:14:0.5"


def parse_terms(spec):
    terms = []
    for part in spec.split(";"):
        part = part.strip()
        if not part:
            continue
        f = part.split(":")
        if len(f) != 4:
            raise ValueError("term %r is not feature:start:end:weight" % part)
        j, s, e = int(f[0]), int(f[1]), int(f[2])
        if j < 0 or s < 0 or s > e:
            raise ValueError("term %r has a bad feature or window" % part)
        terms.append((j, s, e, float(f[3])))
    return terms


def additive_model(terms, bias=0.0, classification=False, pure_python=False):
    """Return predict(batch) for the demonstration model: with NumPy, or
    with Python floats in the order of the Go model's sums."""

    def check(d, l):
        for j, s, e, _ in terms:
            if j >= d or e >= l:
                raise ValueError("term on feature %d, timesteps %d..%d does not fit data with %d features and %d timesteps"
                                 % (j, s, e, d, l))

    def predict_numpy(batch):
        m, d, l = batch.shape
        check(d, l)
        score = np.full(m, bias, dtype=np.float64)
        for j, s, e, w in terms:
            score += w * (batch[:, j, s:e + 1].sum(axis=1) / (e - s + 1))
        return 1 / (1 + np.exp(-score)) if classification else score

    def predict_lists(batch):
        if not batch:
            return []
        check(len(batch[0]), len(batch[0][0]))
        out = []
        for inst in batch:
            score = bias
            for j, s, e, w in terms:
                total = 0.0
                for v in inst[j][s:e + 1]:
                    total += v
                score += w * (total / (e - s + 1))
            out.append(1 / (1 + math.exp(-score)) if classification else score)
        return out

    if pure_python:
        return lambda batch: predict_lists(batch.tolist())
    return predict_numpy


def main():
    ap = argparse.ArgumentParser(description="Serve tempora's demonstration additive windowed model.")
    ap.add_argument("--terms", default=DEFAULT_TERMS, help="model terms feature:start:end:weight;...")
    ap.add_argument("--bias", type=float, default=0.0, help="constant added to the score")
    ap.add_argument("--task", choices=["regression", "classification"], default="regression")
    ap.add_argument("--no-numpy", action="store_true", help="compute the model with Python floats, not NumPy")
    args = ap.parse_args()
    serve(additive_model(parse_terms(args.terms), args.bias, args.task == "classification", args.no_numpy))


if __name__ == "__main__":
    main()
