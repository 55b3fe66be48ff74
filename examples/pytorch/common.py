"""Shared pieces of the learned-model example: seeds, AUROC, problems and splits.

Nothing here needs torch, so the AUROC and the data handling are testable
without it.
"""

import hashlib
import json
import os
import subprocess

import numpy as np


def derive_seed(run_seed, *keys):
    """Returns a 63-bit seed derived from the run seed and a stream key.

    The same (run_seed, keys) always gives the same seed, and different keys
    give unrelated seeds, so every random stream of a run (a problem, a
    network's initialisation, a random feature set) is reproducible on its
    own and independent of the order in which the streams are used.
    """
    h = hashlib.blake2b(digest_size=8)
    h.update(str(int(run_seed)).encode())
    for k in keys:
        h.update(b"/")
        h.update(str(k).encode())
    return int.from_bytes(h.digest(), "little") >> 1


def auroc(y, score):
    """Returns the area under the ROC curve of scores for binary labels.

    It is the Mann-Whitney statistic: the probability that a random positive
    scores above a random negative, ties counting one half, computed from
    mid-ranks in O(n log n). It is NaN when only one class is present.
    """
    y = np.asarray(y).astype(bool).ravel()
    score = np.asarray(score, dtype=np.float64).ravel()
    if y.shape != score.shape:
        raise ValueError("auroc: %d labels but %d scores" % (y.size, score.size))
    if not np.all(np.isfinite(score)):
        raise ValueError("auroc: scores must be finite")
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    s = score[order]
    ranks = np.empty(s.size, dtype=np.float64)
    # Mid-ranks (1-based) for runs of tied scores.
    start = 0
    boundaries = np.flatnonzero(np.diff(s)) + 1
    for end in list(boundaries) + [s.size]:
        ranks[start:end] = (start + 1 + end) / 2.0
        start = end
    r = np.empty_like(ranks)
    r[order] = ranks
    u = r[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


class Problem:
    """A synthetic problem directory written by `tempora synth`.

    X is the M x D x L data (float64), y the labels, truth the parsed
    truth.json and model the parsed model.json (the generator's model).
    """

    def __init__(self, directory):
        self.dir = directory
        self.X = np.load(os.path.join(directory, "data.npy"))
        self.y = np.load(os.path.join(directory, "targets.npy"))
        with open(os.path.join(directory, "truth.json")) as f:
            self.truth = json.load(f)
        with open(os.path.join(directory, "model.json")) as f:
            self.model = json.load(f)
        if self.X.ndim != 3 or self.y.shape != (self.X.shape[0],):
            raise ValueError("problem %s: data %s and targets %s do not match" % (directory, self.X.shape, self.y.shape))

    @property
    def relevant(self):
        """Indices of the features the generator's labels depend on."""
        return [f["index"] for f in self.truth["features"] if f["relevant"]]


def synth(binary, out, seed, instances, features=10, timesteps=20, relevant=0.5):
    """Writes a classification problem with `tempora synth` (noise auto, as in Table 1)."""
    cmd = [binary, "synth", "-out", out, "-instances", str(instances), "-features", str(features),
           "-timesteps", str(timesteps), "-relevant", str(relevant), "-task", "classification",
           "-noise", "auto", "-seed", str(seed)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("tempora synth failed: %s" % r.stderr.strip())
    return Problem(out)


def split(n_instances, n_train, n_test):
    """Returns index arrays (train, test, holdout) over the first instances in order.

    The generator's instances are independent draws, so a split by position is
    a random split; keeping the order makes the test split the instances
    n_train .. n_train+n_test-1 of the problem, whatever the seed.
    """
    if n_train + n_test > n_instances:
        raise ValueError("split: %d + %d instances requested, the problem has %d" % (n_train, n_test, n_instances))
    idx = np.arange(n_instances)
    return idx[:n_train], idx[n_train:n_train + n_test], idx[n_train + n_test:]


def write_csv(path, header, rows):
    """Writes rows (sequences of values) as CSV with a header, atomically."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(_fmt(v) for v in r) + "\n")
    os.replace(tmp, path)


def _fmt(v):
    if isinstance(v, float):
        return "%.6g" % v
    return str(v)
