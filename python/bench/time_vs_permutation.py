#!/usr/bin/env python3
"""TIME through the Python package against grouped permutation importance,
on issue 22's regression problem: 500 instances x 100 features x 200
timesteps, 5 relevant features, and a NumPy model (the sum of each
relevant feature's mean over its window).

    make build && TEMPORA=bin/tempora python3 python/bench/time_vs_permutation.py

(any Python with NumPy; the package is taken from this source tree unless
installed). It prints, for TIME (tempora.explain, default settings) and for
grouped permutation importance (a whole feature permuted across instances,
5 repeats, written the way scikit-learn's permutation_importance works:
one copy of the data per feature, the feature's rows shuffled in place per
repeat, the score against the baseline score, R^2), the wall time, the time
spent inside predict, the model calls and instance evaluations, TIME's
draws, and whether each found the 5 features (and TIME their windows).
scikit-learn is used for the permutation importance when it can be
imported (sklearn.inspection.permutation_importance, on an estimator that
sees each whole feature as one column of objects), else the NumPy loop
above; the output says which. --shape M,D,L and --relevant K run other
sizes (the tests run a tiny one); --work-us U adds U µs of busy work per
instance to the model, to read TIME's time outside the model against a
model's cost. It is not part of the default tests.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import tempora  # noqa: E402


def make_problem(m, d, l, k, seed):
    """Data, targets and the truth: k relevant features at spread indices,
    each with its own window, weights of alternating sign."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d, l))
    feats = [int(round((i + 0.5) * d / k)) for i in range(k)]
    windows = []
    for i in range(k):
        length = max(1, l // 10)
        start = int((i + 1) * (l - length) / (k + 1))
        windows.append((start, start + length - 1))
    weights = [(1.0 if i % 2 == 0 else -1.0) * (1.0 + 0.25 * i) for i in range(k)]
    y = model_of(feats, windows, weights)(X) + rng.normal(scale=0.1, size=m)
    return X, y, feats, windows, weights


def model_of(feats, windows, weights, work_us=0.0):
    """The model: the weighted sum of each relevant feature's mean over its
    window (about 0.2-0.4 µs per instance, the issue's model), plus, with
    work_us > 0, a busy wait of work_us µs per instance: a stand-in for a
    model that does real work per instance, so that the share of TIME's
    time spent outside the model can be read against the model's cost."""
    def predict(batch):
        end = time.perf_counter() + work_us * 1e-6 * len(batch)
        out = np.zeros(len(batch))
        for j, (s, e), w in zip(feats, windows, weights):
            out += w * batch[:, j, s:e + 1].mean(axis=1)
        while work_us > 0 and time.perf_counter() < end:
            pass
        return out
    return predict


class Timed:
    """predict, with the time spent inside it and its calls counted."""

    def __init__(self, f):
        self.f, self.seconds, self.calls, self.instances = f, 0.0, 0, 0

    def __call__(self, batch):
        t = time.perf_counter()
        try:
            return self.f(batch)
        finally:
            self.seconds += time.perf_counter() - t
            self.calls += 1
            self.instances += len(batch)


def r2(y, p):
    return 1.0 - float(((y - p) ** 2).sum()) / float(((y - y.mean()) ** 2).sum())


def grouped_pi_numpy(predict, X, y, repeats, seed):
    """Grouped permutation importance as scikit-learn computes it: the
    baseline score, then per feature one copy of X whose feature block is
    shuffled across instances in place for each repeat."""
    rs = np.random.RandomState(seed)
    base = r2(y, predict(X))
    imp = np.zeros((X.shape[1], repeats))
    for j in range(X.shape[1]):
        Xp = X.copy()
        for r in range(repeats):
            idx = rs.permutation(X.shape[0])
            Xp[:, j, :] = X[idx, j, :]
            imp[j, r] = base - r2(y, predict(Xp))
    return imp


def grouped_pi_sklearn(predict, X, y, repeats, seed):
    """scikit-learn's permutation_importance on a 2-D object array whose
    column j holds feature j's whole sequence per instance, so that
    permuting a column permutes the whole feature across instances."""
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.inspection import permutation_importance

    m, d, l = X.shape

    class Seq(RegressorMixin, BaseEstimator):
        def fit(self, Xo, yo):
            return self

        def predict(self, Xo):
            batch = np.stack([np.stack(list(row)) for row in Xo])
            return predict(batch)

    Xo = np.empty((m, d), dtype=object)
    for i in range(m):
        for j in range(d):
            Xo[i, j] = X[i, j]
    res = permutation_importance(Seq().fit(Xo, y), Xo, y, n_repeats=repeats, random_state=seed)
    return res.importances


def fixed_costs(X):
    """What a run pays whatever its draws, measured apart: writing X as
    .npy where tempora.explain writes it, and the program's start with
    reading it back (tempora describe -data, which reads the data as
    explain does and summarises it)."""
    from tempora import _explain
    exe = tempora.find_binary()
    scratch = getattr(_explain, "_scratch_dir", lambda n: None)  # an older package has none
    with tempfile.TemporaryDirectory(prefix="tempora-bench-", dir=scratch(X.nbytes)) as tmp:
        path = os.path.join(tmp, "X.npy")
        t = time.perf_counter()
        np.save(path, X)
        save = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run([exe, "describe", "-data", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        read = time.perf_counter() - t
        where = tmp
    return {"save_s": save, "program_read_s": read, "dir": os.path.dirname(where)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="500,100,200", help="M,D,L")
    ap.add_argument("--relevant", type=int, default=5, help="relevant features")
    ap.add_argument("--repeats", type=int, default=5, help="permutation importance repeats")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--numpy", action="store_true", help="the NumPy permutation importance even if sklearn imports")
    ap.add_argument("--json", help="also write the numbers as JSON to this file")
    ap.add_argument("--work-us", type=float, default=0.0,
                    help="µs of busy work per instance added to the model (default 0: the issue's model)")
    args = ap.parse_args()
    m, d, l = (int(v) for v in args.shape.split(","))
    X, y, feats, windows, weights = make_problem(m, d, l, args.relevant, args.seed)
    model = model_of(feats, windows, weights, args.work_us)
    out = {"shape": [m, d, l], "relevant": feats, "windows": windows, "work_us": args.work_us}

    # TIME through the package, default settings (the program's methods
    # table is read first, as a session's first explain call would, so
    # that the timing holds only the explain call).
    tempora.method_table()
    timed = Timed(model)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time()
    t = time.perf_counter()
    ex = tempora.explain(timed, X, y, task="regression", seed=args.seed, progress=False)
    wall = time.perf_counter() - t
    cpu = time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    program_cpu = (after.ru_utime - kids.ru_utime) + (after.ru_stime - kids.ru_stime)
    e = ex.to_dict()
    acc = e["accounting"]
    found = [f["index"] for f in e["features"] if f["important"]]
    exact = sum(1 for f in e["features"] if f["important"] and f["index"] in feats
                and f.get("window") is not None and tuple(f["window"]) == tuple(windows[feats.index(f["index"])]))
    draws = sum(c["draws"] for c in acc.get("draws", []))
    out["time"] = {"wall_s": wall, "predict_s": timed.seconds, "predict_calls": timed.calls,
                   "predict_instances": timed.instances, "model_calls": acc["model_calls"],
                   "instance_evaluations": acc["instance_evaluations"], "draws": draws,
                   "found": len(set(found) & set(feats)), "false": len(set(found) - set(feats)), "exact_windows": exact,
                   "python_cpu_s": cpu, "program_cpu_s": program_cpu}
    out["fixed"] = fixed_costs(X)

    # Grouped permutation importance.
    use_sklearn = False
    if not args.numpy:
        try:
            import sklearn  # noqa: F401
            use_sklearn = True
        except ImportError:
            pass
    timed = Timed(model)
    t = time.perf_counter()
    if use_sklearn:
        imp = grouped_pi_sklearn(timed, X, y, args.repeats, args.seed)
    else:
        imp = grouped_pi_numpy(timed, X, y, args.repeats, args.seed)
    pi_wall = time.perf_counter() - t
    top = [int(j) for j in np.argsort(-imp.mean(axis=1))[:len(feats)]]
    numpy_why = "--numpy" if args.numpy else "scikit-learn is not importable"
    out["pi"] = {"implementation": "scikit-learn" if use_sklearn else "NumPy (%s)" % numpy_why,
                 "wall_s": pi_wall, "predict_s": timed.seconds, "predict_calls": timed.calls,
                 "predict_instances": timed.instances, "top_are_relevant": len(set(top) & set(feats))}
    out["ratio_time_to_pi"] = wall / pi_wall
    out["ratio_time_to_its_predict"] = wall / max(out["time"]["predict_s"], 1e-12)

    ti, pi = out["time"], out["pi"]
    print("problem: %d x %d x %d, relevant features %s%s" % (
        m, d, l, feats, "; the model works %g µs more per instance" % args.work_us if args.work_us else ""))
    print("TIME:   %7.2f s wall, %6.2f s inside predict (%d calls, %d instances); %d draws, %d model calls; "
          "found %d of %d, %d false, %d exact windows" % (
              ti["wall_s"], ti["predict_s"], ti["predict_calls"], ti["predict_instances"], ti["draws"],
              ti["model_calls"], ti["found"], len(feats), ti["false"], ti["exact_windows"]))
    print("PI:     %7.2f s wall, %6.2f s inside predict (%d calls, %d instances); %s; top %d: %d relevant" % (
        pi["wall_s"], pi["predict_s"], pi["predict_calls"], pi["predict_instances"], pi["implementation"],
        len(feats), pi["top_are_relevant"]))
    print("ratio:  TIME / PI = %.2f; TIME / time inside its predict = %.2f" % (
        out["ratio_time_to_pi"], out["ratio_time_to_its_predict"]))
    print("CPU:    TIME's Python process %.2f s, the tempora program %.2f s" % (ti["python_cpu_s"], ti["program_cpu_s"]))
    fx = out["fixed"]
    print("fixed:  np.save of X %.2f s (in %s), program start + reading X (tempora describe) %.2f s" % (
        fx["save_s"], fx["dir"], fx["program_read_s"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
