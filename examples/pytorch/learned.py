#!/usr/bin/env python3
"""Learned temporal networks explained with tempora, and the TIME paper's
feature-selection check, on synthetic problems whose truth is known.

For each problem (tempora synth, classification, Table-1 shape by default):

 1. split the instances into train / test / holdout (4000 / 1000 / 1000),
    train each architecture (an LSTM and a 1-D CNN) on the training split with
    the generator's labels, and measure its AUROC;
 2. explain the trained network on the test split with TIME, PERM and SAGE-m
    through the tempora Python package, and score the explanations against the
    generator's truth with `tempora evaluate` (tempora.evaluate);
 3. retrain the same architecture on (a) all features, (b) TIME's important
    features, (c) as many top PERM features, (d) as many random features, and,
    as a reference, (e) the generator's relevant features; measure each on the
    holdout split, which neither the explanations nor the training saw.

Then it writes tables (markdown and CSV) into the output directory. The
figures are drawn from the CSVs by the Go helper examples/pytorch/plot.

    /usr/bin/python3 examples/pytorch/learned.py -scale quick -out out/learned-quick

Results are records under OUT/runs (one JSON file per problem and
architecture); a rerun with the same settings skips finished records, so an
interrupted run resumes. See examples/pytorch/README.md.
"""

import argparse
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Settings per scale. Widths are LSTM hidden units and CNN channels.
# options holds each method's keyword options for tempora.explain: TIME runs
# with the package's defaults (sequential tests, a cap per family of tests);
# PERM as in the paper, with fixed P permutations per cell (only its scores
# are used, to rank cells and features; sequential PERM's automatic cap is
# 1999 at 10 x 20 and costs about four times the model calls); SAGE-m until
# it converges, capped at max_permutations.
SCALES = {
    # A few seconds per stage: the smoke test (make test-learned).
    "smoke": dict(problems=1, features=4, timesteps=8, train=1000, test=200, holdout=200,
                  archs=("lstm", "cnn"), width={"lstm": 8, "cnn": 8}, epochs={"lstm": 5, "cnn": 3}, lr=1e-2,
                  methods=("time", "perm", "sage-m"), random_sets=2,
                  options={"time": {}, "perm": {"sequential": False, "permutations": 20},
                           "sage-m": {"max_permutations": 64}}),
    # make learned-quick: at most 10 minutes on 2 cores. The CNN only: the
    # LSTM's predictions cost about four times as much, and TIME and PERM
    # spend most of their time in the model.
    "quick": dict(problems=10, features=10, timesteps=20, train=4000, test=1000, holdout=1000,
                  archs=("cnn",), width={"lstm": 16, "cnn": 16}, epochs={"lstm": 12, "cnn": 10},
                  lr=3e-3, methods=("time", "perm"), random_sets=3,
                  options={"time": {}, "perm": {"sequential": False, "permutations": 50}}),
    # make learned: the full scale.
    "full": dict(problems=20, features=10, timesteps=20, train=4000, test=1000, holdout=1000,
                 archs=("lstm", "cnn"), width={"lstm": 16, "cnn": 16}, epochs={"lstm": 12, "cnn": 10},
                 lr=3e-3, methods=("time", "perm", "sage-m"), random_sets=5,
                 options={"time": {}, "perm": {"sequential": False, "permutations": 50},
                          "sage-m": {"max_permutations": 8192}}),
}

SETS = ("all", "time", "perm", "random", "truth")


def _import_tempora():
    try:
        import tempora
    except ImportError:
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import tempora
    return tempora


def _binary(flag):
    for b in (flag, os.environ.get("TEMPORA"), os.path.join(ROOT, "bin", "tempora")):
        if b:
            return os.path.abspath(b)
    return None


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


class Clock:
    """Wall time and CPU time (this process and its finished children: the
    tempora program, model processes) since the last lap."""

    def __init__(self):
        self._last = self._now()

    @staticmethod
    def _now():
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.time(), time.process_time() + ru.ru_utime + ru.ru_stime

    def lap(self):
        now = self._now()
        wall, cpu = now[0] - self._last[0], now[1] - self._last[1]
        self._last = now
        return {"wall": wall, "cpu": cpu}


def _log(msg):
    print("learned: " + msg, file=sys.stderr, flush=True)


def settings(args):
    """Returns the run's settings: the scale's, overridden by the command line."""
    cfg = dict(SCALES[args.scale])
    if args.problems:
        cfg["problems"] = args.problems
    if args.archs:
        cfg["archs"] = tuple(args.archs.split(","))
    if args.methods:
        cfg["methods"] = tuple(args.methods.split(","))
    for m in ("time", "perm"):
        if m not in cfg["methods"]:
            raise SystemExit("learned: -methods must include time and perm (the check selects features with them)")
    cfg["options"] = {m: dict(cfg["options"].get(m, {})) for m in cfg["methods"]}
    cfg["scale"] = args.scale
    cfg["seed"] = args.seed
    cfg["threads"] = args.threads
    return cfg


def run_problem(i, cfg, args, tempora, binary):
    """Runs every stage for problem i and returns its records (one per architecture)."""
    import common
    import generator
    import nets
    import scoring

    seed = cfg["seed"]
    n = cfg["train"] + cfg["test"] + cfg["holdout"]
    pdir = os.path.join(args.out, "problems", "p%02d" % i)
    pseed = common.derive_seed(seed, "problem", i)
    prob = common.synth(binary, pdir, pseed, n, cfg["features"], cfg["timesteps"])
    tr, te, ho = common.split(n, cfg["train"], cfg["test"])
    X, y = prob.X, prob.y
    d = X.shape[1]
    alpha, relevant = generator.coefficients(prob.model)
    flips = generator.label_flip_rates(prob.model, X[tr])
    corr = generator.timestep_correlations(prob.model, X[tr])
    gen_auc = {"test": common.auroc(y[te], generator.predict(prob.model, X[te])),
               "holdout": common.auroc(y[ho], generator.predict(prob.model, X[ho]))}
    with open(os.path.join(pdir, "problem.json")) as f:
        gens = json.load(f)["generators"]
    types = [g["type"] + ("-trend" if g.get("trend") else "") + ("-bernoulli" if g.get("bernoulli") else "") for g in gens]
    aggregators = [f["aggregator"] for f in sorted(prob.model["features"], key=lambda f: f["index"])]
    records = []
    for arch in cfg["archs"]:
        path = os.path.join(args.out, "runs", "p%02d-%s.json" % (i, arch))
        key = {k: cfg[k] for k in ("scale", "seed", "threads", "features", "timesteps", "train", "test",
                                  "holdout", "random_sets", "lr", "options")}
        key.update(width=cfg["width"][arch], epochs=cfg["epochs"][arch], methods=list(cfg["methods"]))
        if os.path.exists(path):
            with open(path) as f:
                rec = json.load(f)
            if rec.get("settings") == key:
                if "aggregators" not in rec:  # a property of the problem, added after the first runs
                    rec["aggregators"] = aggregators
                    _write_json(path, rec)
                _log("p%02d %s: done earlier, kept" % (i, arch))
                records.append(rec)
                continue
        rec = {"problem": i, "problem_seed": pseed, "arch": arch, "settings": key,
               "relevant": [int(j) for j in range(d) if relevant[j]],
               "coefficients": [float(a) for a in alpha], "label_flip_rates": [float(r) for r in flips],
               "timestep_correlations": [[round(float(c), 6) for c in row] for row in corr],
               "feature_types": types, "aggregators": aggregators, "true_windows": [f["window"] for f in prob.truth["features"]],
               "generator_auroc": gen_auc, "timing": {}}
        tseed = common.derive_seed(seed, "train", i, arch)
        clock = Clock()
        net = nets.train(arch, X[tr], y[tr], tseed, cfg["epochs"][arch], cfg["width"][arch], lr=cfg["lr"])
        rec["timing"]["train"] = clock.lap()
        predict = nets.predictor(net)
        rec["auroc"] = {s: common.auroc(y[idx], predict(X[idx])) for s, idx in (("train", tr), ("test", te), ("holdout", ho))}
        _log("p%02d %s: trained in %.1fs, test AUROC %.4f" % (i, arch, rec["timing"]["train"]["wall"], rec["auroc"]["test"]))

        # Explanations of the network on the test split.
        rec["explanations"] = {}
        expl = {}
        factory = nets.Factory(arch, net, cfg["threads"]) if args.model_procs > 1 else None
        for method in cfg["methods"]:
            opts = cfg["options"][method]
            clock.lap()
            e = tempora.explain(predict, X[te], y[te], task="classification", method=method,
                                seed=common.derive_seed(seed, "explain", i, arch, method),
                                workers=args.model_procs, model_procs=args.model_procs, model_factory=factory,
                                binary=binary, **opts)
            rec["timing"][method] = clock.lap()
            ej = e.to_json()
            with open(os.path.join(args.out, "explanations", "p%02d-%s-%s.json" % (i, arch, method)), "w") as f:
                f.write(ej + "\n")
            m = tempora.evaluate(pdir, e, binary=binary)
            entry = {"metrics": m, "model_calls": e.accounting.model_calls, "incomplete": e.accounting.incomplete,
                     "draws": [{"test": c.test, "tests": c.tests, "draws": c.draws, "max_draws": c.max_draws}
                               for c in e.accounting.draws],
                     "warnings": list(e.warnings),
                     "feature_scores": [float(s) for s in tempora.feature_scores(e.cells)]}
            if method == "time":
                entry["important"] = [f.index for f in e.features if f.important]
                entry["windows"] = [None if f.window is None else list(f.window) for f in e.features]
                entry["window_significant"] = [bool(f.window_significant) for f in e.features]
                entry["scores"] = [float(f.score) for f in e.features]
                entry["p_adjusted"] = [float(f.p_adjusted) for f in e.features]
                entry["ordering_important"] = [bool(f.ordering_important) for f in e.features]
                entry["window_ordering_important"] = [bool(f.window_ordering_important) for f in e.features]
                entry["window_exact"], entry["window_found"] = scoring.window_exactness(e, prob.truth)
            rec["explanations"][method] = entry
            expl[method] = e
            _log("p%02d %s: %s in %.1fs (%d model calls), feature power %.2f, FDR %.2f" % (
                i, arch, method, rec["timing"][method]["wall"], e.accounting.model_calls, m["feature-power"], m["feature-fdr"]))

        # The retraining check.
        k = len(rec["explanations"]["time"]["important"])
        sets = {"all": list(range(d)), "time": rec["explanations"]["time"]["important"],
                "perm": tempora.top_features(expl["perm"].cells, k), "truth": rec["relevant"]}
        draws = [scoring.random_features(d, k, common.derive_seed(seed, "random", i, arch, r))
                 for r in range(cfg["random_sets"])]
        sel = {}
        clock.lap()
        for name in SETS:
            feats_list = draws if name == "random" else [sets[name]]
            aucs = []
            for feats in feats_list:
                if name == "all":
                    aucs.append(rec["auroc"]["holdout"])
                elif not feats:
                    aucs.append(0.5)  # no feature: a constant prediction
                else:
                    sub = nets.train(arch, X[tr][:, feats, :], y[tr], tseed, cfg["epochs"][arch], cfg["width"][arch], lr=cfg["lr"])
                    aucs.append(common.auroc(y[ho], nets.predictor(sub, feats)(X[ho])))
            sel[name] = {"features": feats_list if name == "random" else feats_list[0],
                         "k": len(feats_list[0]), "auroc": aucs, "auroc_mean": float(sum(aucs) / len(aucs))}
        rec["timing"]["retrain"] = clock.lap()
        rec["selection"] = sel
        _log("p%02d %s: holdout AUROC all %.4f, time %.4f, perm %.4f, random %.4f, truth %.4f (k=%d)" % (
            i, arch, *(sel[s]["auroc_mean"] for s in SETS), k))
        _write_json(path, rec)
        records.append(rec)
    return records


def main(argv=None):
    ap = argparse.ArgumentParser(prog="learned.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-scale", choices=sorted(SCALES), default="quick", help="settings (default quick)")
    ap.add_argument("-out", required=True, help="output directory")
    ap.add_argument("-seed", type=int, default=1, help="run seed (default 1)")
    ap.add_argument("-problems", type=int, default=0, help="number of problems (default: the scale's)")
    ap.add_argument("-archs", default="", help="architectures, comma-separated: lstm, cnn (default: the scale's)")
    ap.add_argument("-methods", default="", help="explanation methods, comma-separated (default: the scale's)")
    ap.add_argument("-threads", type=int, default=1, help="torch intra-op threads (default 1)")
    ap.add_argument("-model-procs", dest="model_procs", type=int, default=1,
                    help="processes answering tempora's batches (default 1)")
    ap.add_argument("-tempora", default="", help="tempora binary (default: $TEMPORA, else bin/tempora)")
    args = ap.parse_args(argv)

    try:
        import torch  # noqa: F401
    except ImportError:
        print("learned: PyTorch is not installed (Debian: apt-get install python3-torch)", file=sys.stderr)
        return 2
    import nets
    import report

    tempora = _import_tempora()
    binary = _binary(args.tempora)
    if not binary or not os.access(binary, os.X_OK):
        print("learned: no tempora binary at %s (run make build, or pass -tempora)" % binary, file=sys.stderr)
        return 2
    cfg = settings(args)
    nets.configure_torch(args.threads)
    for sub in ("problems", "runs", "explanations"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    began = Clock()
    records = []
    for i in range(cfg["problems"]):
        records.extend(run_problem(i, cfg, args, tempora, binary))
    report.write(args.out, cfg, records)
    total = began.lap()
    _log("done in %.0fs of wall time, %.0fs of CPU time; tables in %s" % (total["wall"], total["cpu"], args.out))
    with open(os.path.join(args.out, "selection.md")) as f:
        sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main())
