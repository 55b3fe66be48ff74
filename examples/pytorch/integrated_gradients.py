#!/usr/bin/env python3
"""Benchmark integrated gradients, written with PyTorch autograd, against
tempora's methods.

A gradient method needs a differentiable model, and a tempora problem's
model is a black box. So, per problem, the method first learns a small
network (the 1-D CNN of nets.py) that imitates the black box: trained on
the problem's data with the black box's predicted probabilities as soft
labels. It then explains that network with integrated gradients
(Sundararajan et al., 2017): the input minus a baseline (each cell's mean
over the instances) times the gradient of the logit averaged along the
straight path from the baseline to the input, one attribution per instance,
feature and timestep. The per-instance attributions go to tempora.evaluate,
which scores them against each instance's true cells beside OCC, TimeSHAP,
LIME and TIME on the same problems, and returns the DataFrame:

    python3 examples/pytorch/integrated_gradients.py --suite local --models 2

It needs Debian's python3 with NumPy, PyTorch and pandas (apt-get install
python3-numpy python3-torch python3-pandas) and the tempora program
(--tempora, $TEMPORA, or PATH).
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nets import configure_torch, train  # noqa: E402

try:
    import tempora
except ImportError:  # not installed: the package of this source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import tempora


def integrated_gradients(net, x, baseline, steps=32):
    """Integrated gradients of net's output for the instances x (m, D, L)
    from baseline (D, L): (x - baseline) times the mean gradient at
    baseline + a (x - baseline) for a = 1/steps, ..., 1."""
    x = torch.as_tensor(x, dtype=torch.float32)
    b = torch.as_tensor(baseline, dtype=torch.float32).expand_as(x)
    total = torch.zeros_like(x)
    for a in torch.arange(1, steps + 1) / steps:
        point = (b + a * (x - b)).requires_grad_(True)
        net(point).sum().backward()
        total += point.grad
    return ((x - b) * total / steps).double().numpy()


def make_method(instances, epochs, seed):
    def ig(problem):
        """Learn a surrogate of the problem's black box, then explain its
        first instances with integrated gradients."""
        soft = problem.predict(problem.X)
        if problem.task != "classification":
            raise ValueError("this example imitates classifiers (soft labels); %r is a regression" % (problem,))
        net = train("cnn", problem.X, soft, seed=seed, epochs=epochs, width=16)
        return integrated_gradients(net, problem.X[:instances], problem.X.mean(axis=0))
    return ig


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="local")
    ap.add_argument("--models", type=int, default=2)
    ap.add_argument("--instances", type=int, default=100, help="instances explained per problem")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--compare", default="TIME,LIME,OCC,TimeSHAP")
    ap.add_argument("--dir", default=None, help="where problems, records and report go (default: a temporary one)")
    ap.add_argument("--tempora", default=None)
    args = ap.parse_args()
    configure_torch(1)
    with tempora.problems(args.suite, quick=True, models=args.models, dir=args.dir, binary=args.tempora) as probs:
        df = tempora.evaluate(probs, make_method(args.instances, args.epochs, seed=1), method="IG",
                              compare=args.compare.split(",") if args.compare else [])
    cols = [c for c in ("timestep-auroc", "timestep-auprc", "instance-timestep-auroc", "instance-timestep-auprc")
            if c in df.columns]
    print(df[[c for m in cols for c in (m, m + "_se")]].to_string(float_format="%.3f"))
    print("records and report in", probs.dir, file=sys.stderr)


if __name__ == "__main__":
    main()
