"""Tables of a learned-model run, from its records only.

write(out, cfg, records) writes markdown and CSV tables, the per-problem CSVs
the figure helper (examples/pytorch/plot) reads, and index.md, which gathers
the tables. Every table is a function of the records, which are a function
of the run seed and the thread count (see README.md): wall times go to
timing.csv only.
"""

import math
import os

import numpy as np

from common import write_csv

SET_LABELS = {"all": "(a) all features", "time": "(b) TIME's important features",
              "perm": "(c) top PERM features, as many", "random": "(d) random features, as many",
              "truth": "(e) the generator's relevant features"}
SET_SHORT = {"all": "(a) all", "time": "(b) TIME", "perm": "(c) PERM", "random": "(d) random", "truth": "(e) truth"}
METHOD_LABELS = {"time": "TIME", "perm": "PERM", "sage-m": "SAGE-m", "sage": "SAGE", "lime": "LIME"}
DETECTION = ("feature-power", "feature-fdr", "timestep-power", "timestep-fdr")
FLIP_BUCKETS = ((0.0, 0.01), (0.01, 0.05), (0.05, 0.10), (0.10, 1.01))


def _ms(xs, digits=3):
    """'mean (SD)' over the values, SD with n - 1 (blank for one value)."""
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return "-"
    m = float(np.mean(xs))
    if len(xs) < 2:
        return "%.*f" % (digits, m)
    return "%.*f (%.*f)" % (digits, m, digits, float(np.std(xs, ddof=1)))


def _sd(xs):
    return float(np.std(xs, ddof=1)) if len(xs) > 1 else float("nan")


def _md(header, rows):
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _archs(records):
    seen = []
    for r in records:
        if r["arch"] not in seen:
            seen.append(r["arch"])
    return seen


def networks(records):
    header = ["network", "width", "epochs", "train AUROC", "test AUROC", "holdout AUROC", "problems"]
    rows, csv = [], []
    for a in _archs(records):
        rs = [r for r in records if r["arch"] == a]
        s = rs[0]["settings"]
        vals = {k: [r["auroc"][k] for r in rs] for k in ("train", "test", "holdout")}
        rows.append([a.upper(), s["width"], s["epochs"], _ms(vals["train"]), _ms(vals["test"]), _ms(vals["holdout"]), len(rs)])
        csv.append([a, s["width"], s["epochs"], np.mean(vals["train"]), _sd(vals["train"]), np.mean(vals["test"]),
                    _sd(vals["test"]), np.mean(vals["holdout"]), _sd(vals["holdout"]), len(rs)])
    # The generator's own model (with its irrelevant features scaled by beta),
    # once per problem.
    by_p = {r["problem"]: r["generator_auroc"] for r in records}
    g = [by_p[p] for p in sorted(by_p)]
    rows.append(["generator's model (noise β)", "-", "-", "-", _ms([x["test"] for x in g]), _ms([x["holdout"] for x in g]), len(g)])
    csv.append(["generator", "", "", "", "", np.mean([x["test"] for x in g]), _sd([x["test"] for x in g]),
                np.mean([x["holdout"] for x in g]), _sd([x["holdout"] for x in g]), len(g)])
    return (_md(header, rows),
            (["network", "width", "epochs", "train_mean", "train_sd", "test_mean", "test_sd", "holdout_mean",
              "holdout_sd", "problems"], csv))


def detection(records):
    header = ["network", "method", "feature power", "feature FDR", "timestep power", "timestep FDR",
              "important / selected features", "median model calls", "incomplete", "problems"]
    rows, csv, per = [], [], []
    for a in _archs(records):
        rs = [r for r in records if r["arch"] == a]
        for m in sorted(rs[0]["explanations"], key=lambda m: (list(METHOD_LABELS).index(m) if m in METHOD_LABELS else 99, m)):
            es = [r["explanations"][m] for r in rs]
            vals = {k: [e["metrics"][k] for e in es] for k in DETECTION}
            n_sel = [len(e["important"]) for e in es] if m == "time" else [len(r["relevant"]) for r in rs]
            rows.append([a.upper(), METHOD_LABELS.get(m, m)] + [_ms(vals[k]) for k in DETECTION] +
                        [_ms(n_sel, 2) + ("" if m == "time" else " (top n)"),
                         int(np.median([e["model_calls"] for e in es])), sum(e["incomplete"] for e in es), len(rs)])
            csv.append([a, m] + [v for k in DETECTION for v in (np.mean(vals[k]), _sd(vals[k]))] + [len(rs)])
            for r, e in zip(rs, es):
                per.append([a, r["problem"], m] + [e["metrics"][k] for k in DETECTION])
    return (_md(header, rows),
            (["network", "method"] + [k.replace("-", "_") + s for k in DETECTION for s in ("_mean", "_sd")] + ["problems"], csv),
            (["network", "problem", "method"] + [k.replace("-", "_") for k in DETECTION], per))


def time_details(records):
    """TIME's window and ordering results against the truth."""
    header = ["network", "relevant features found", "windows exact", "avg-window power", "avg-window FDR",
              "ordering power", "ordering FDR", "window-ordering power", "window-ordering FDR"]
    rows, csv = [], []
    for a in _archs(records):
        es = [r["explanations"]["time"] for r in records if r["arch"] == a]
        found = sum(e["window_found"] for e in es)
        exact = sum(e["window_exact"] for e in es)
        nrel = sum(len(r["relevant"]) for r in records if r["arch"] == a)
        ks = ("avg-window-power", "avg-window-fdr", "ordering-power", "ordering-fdr", "window-ordering-power",
              "window-ordering-fdr")
        vals = {k: [e["metrics"].get(k, float("nan")) for e in es] for k in ks}
        rows.append([a.upper(), "%d of %d" % (found, nrel), "%d of %d (%.0f%%)" % (exact, found, 100.0 * exact / max(found, 1))] +
                    [_ms(vals[k]) for k in ks])
        csv.append([a, found, nrel, exact] + [np.mean(vals[k]) for k in ks])
    return _md(header, rows), (["network", "relevant_found", "relevant", "windows_exact"] +
                               [k.replace("-", "_") + "_mean" for k in ks], csv)


def selection(records):
    header = ["network", "feature set", "features", "holdout AUROC", "minus (a)", "problems"]
    rows, csv, per = [], [], []
    for a in _archs(records):
        rs = [r for r in records if r["arch"] == a]
        base = [r["selection"]["all"]["auroc_mean"] for r in rs]
        for s in SET_LABELS:
            v = [r["selection"][s]["auroc_mean"] for r in rs]
            k = [r["selection"][s]["k"] for r in rs]
            diff = [x - b for x, b in zip(v, base)]
            rows.append([a.upper(), SET_LABELS[s], _ms(k, 1), _ms(v), "-" if s == "all" else _ms(diff), len(rs)])
            csv.append([a, s, np.mean(k), np.mean(v), _sd(v), np.mean(diff), _sd(diff), len(rs)])
            for r in rs:
                per.append([a, r["problem"], s, r["selection"][s]["k"], r["selection"][s]["auroc_mean"]])
    return (_md(header, rows),
            (["network", "set", "features_mean", "auroc_mean", "auroc_sd", "minus_all_mean", "minus_all_sd", "problems"], csv),
            (["network", "problem", "set", "features", "auroc"], per))


def paired(records):
    """TIME's set against the others, problem by problem."""
    header = ["network", "comparison", "mean difference (SD)", "TIME higher", "equal", "TIME lower"]
    rows, csv = [], []
    for a in _archs(records):
        rs = [r for r in records if r["arch"] == a]
        for other in ("perm", "random", "truth", "all"):
            d = [r["selection"]["time"]["auroc_mean"] - r["selection"][other]["auroc_mean"] for r in rs]
            same = sum(1 for r in rs if r["selection"]["time"]["features"] == r["selection"][other]["features"]) if other != "random" else 0
            hi = sum(1 for x in d if x > 0)
            lo = sum(1 for x in d if x < 0)
            note = " (same set in %d)" % same if other in ("perm", "truth") else ""
            rows.append([a.upper(), "(b) TIME − " + SET_SHORT[other], _ms(d, 4), hi, "%d%s" % (len(d) - hi - lo, note), lo])
            csv.append([a, other, np.mean(d), _sd(d), hi, len(d) - hi - lo, lo, same])
    return _md(header, rows), (["network", "other", "diff_mean", "diff_sd", "time_higher", "equal", "time_lower", "same_set"], csv)


def reliance(records):
    """Relevant features by how many labels they decide, and whether each method found them."""
    header = ["network", "labels changed by removing the feature", "relevant features", "TIME found",
              "PERM top-k", "mean |coefficient|"]
    rows, csv = [], []
    for a in _archs(records):
        rs = [r for r in records if r["arch"] == a]
        for lo, hi in FLIP_BUCKETS:
            n = tf = pf = 0
            coefs = []
            for r in rs:
                perm = set(r["selection"]["perm"]["features"])
                imp = set(r["explanations"]["time"]["important"])
                for j in r["relevant"]:
                    if lo <= r["label_flip_rates"][j] < hi:
                        n += 1
                        tf += j in imp
                        pf += j in perm
                        coefs.append(abs(r["coefficients"][j]))
            label = "%g%% – %g%%" % (100 * lo, min(100, 100 * hi)) if hi <= 1 else "≥ %g%%" % (100 * lo)
            rows.append([a.upper(), label, n, "%d (%.0f%%)" % (tf, 100.0 * tf / n) if n else "-",
                         "%d (%.0f%%)" % (pf, 100.0 * pf / n) if n else "-", "%.3f" % np.mean(coefs) if coefs else "-"])
            csv.append([a, lo, min(hi, 1.0), n, tf, pf, float(np.mean(coefs)) if coefs else float("nan")])
        fp = sum(len(set(r["explanations"]["time"]["important"]) - set(r["relevant"])) for r in rs)
        nirr = sum(len(r["coefficients"]) - len(r["relevant"]) for r in rs)
        rows.append([a.upper(), "irrelevant features (0%)", nirr, "%d (%.0f%%)" % (fp, 100.0 * fp / max(nirr, 1)), "-", "-"])
        csv.append([a, "irrelevant", "", nirr, fp, "", float("nan")])
    return _md(header, rows), (["network", "flip_lo", "flip_hi", "relevant", "time_found", "perm_topk", "mean_abs_coefficient"], csv)


def found_by_type(records):
    """Relevant features by generator type: how many labels they decide and how often TIME and PERM found them."""
    header = ["network", "feature type", "relevant features", "median labels changed", "TIME found", "PERM top-k",
              "PERM top-n"]
    rows, csv = [], []
    for a in _archs(records):
        stats = {}
        for r in (r for r in records if r["arch"] == a):
            imp = set(r["explanations"]["time"]["important"])
            perm_k = set(r["selection"]["perm"]["features"])
            fs = r["explanations"]["perm"]["feature_scores"]
            n_true = len(r["relevant"])
            perm_n = set(sorted(range(len(fs)), key=lambda j: (-fs[j], j))[:n_true])
            for j in r["relevant"]:
                st = stats.setdefault(r["feature_types"][j], {"n": 0, "flip": [], "time": 0, "permk": 0, "permn": 0})
                st["n"] += 1
                st["flip"].append(r["label_flip_rates"][j])
                st["time"] += j in imp
                st["permk"] += j in perm_k
                st["permn"] += j in perm_n
        for t in sorted(stats):
            st = stats[t]
            pct = lambda c: "%d (%.0f%%)" % (c, 100.0 * c / st["n"])
            rows.append([a.upper(), t, st["n"], "%.1f%%" % (100 * np.median(st["flip"])), pct(st["time"]), pct(st["permk"]), pct(st["permn"])])
            csv.append([a, t, st["n"], float(np.median(st["flip"])), st["time"], st["permk"], st["permn"]])
    return _md(header, rows), (["network", "feature_type", "relevant", "median_flip_rate", "time_found", "perm_topk", "perm_topn"], csv)


def window_ordering(records):
    """TIME's window-ordering test on relevant features against the generator's aggregator."""
    header = ["network", "aggregator", "order matters to the generator", "relevant features with a significant window",
              "TIME: window ordering important", "of them with the exact window", "TIME: window ordering important (exact)"]
    rows, csv = [], []
    for a in _archs(records):
        stats = {}
        for r in (r for r in records if r["arch"] == a):
            e = r["explanations"]["time"]
            for j in e["important"]:
                if j in r["relevant"] and e["window_significant"][j]:
                    st = stats.setdefault(r["aggregators"][j], [0, 0, 0, 0])
                    st[0] += 1
                    st[1] += e["window_ordering_important"][j]
                    if e["windows"][j] == r["true_windows"][j]:
                        st[2] += 1
                        st[3] += e["window_ordering_important"][j]
        pct = lambda k, n: "%d (%.0f%%)" % (k, 100.0 * k / n) if n else "-"
        for agg in sorted(stats):
            n, k, ne, ke = stats[agg]
            ordered = "yes" if agg.endswith("weighted_sum") else "no"
            rows.append([a.upper(), agg, ordered, n, pct(k, n), ne, pct(ke, ne)])
            csv.append([a, agg, ordered, n, k, ne, ke])
    return _md(header, rows), (["network", "aggregator", "generator_order_matters", "features", "time_window_ordering",
                                "exact_window", "time_window_ordering_exact"], csv)


def windows(records):
    """TIME's windows of the relevant features it found, against the generator's, by feature type."""
    header = ["network", "feature type", "found", "exact", "wider", "narrower", "shifted",
              "mean start offset", "mean end offset", "corr. before window", "corr. after window"]
    rows, csv = [], []
    for a in _archs(records):
        stats = {}
        for r in (r for r in records if r["arch"] == a):
            e = r["explanations"]["time"]
            for j in e["important"]:
                if j not in r["relevant"] or e["windows"][j] is None:
                    continue
                (gs, ge), (ts, te) = e["windows"][j], r["true_windows"][j]
                kind = ("exact" if (gs, ge) == (ts, te) else "wider" if gs <= ts and ge >= te
                        else "narrower" if gs >= ts and ge <= te else "shifted")
                st = stats.setdefault(r["feature_types"][j], {"exact": 0, "wider": 0, "narrower": 0, "shifted": 0,
                                                              "ds": [], "de": [], "cb": [], "ca": []})
                st[kind] += 1
                st["ds"].append(gs - ts)
                st["de"].append(ge - te)
                c = r["timestep_correlations"][j]
                if ts > 0:
                    st["cb"].append(max(c[:ts]))
                if te < len(c) - 1:
                    st["ca"].append(max(c[te + 1:]))
        for t in sorted(stats):
            st = stats[t]
            n = len(st["ds"])
            cb = float(np.mean(st["cb"])) if st["cb"] else float("nan")
            ca = float(np.mean(st["ca"])) if st["ca"] else float("nan")
            rows.append([a.upper(), t, n, st["exact"], st["wider"], st["narrower"], st["shifted"],
                         "%+.2f" % np.mean(st["ds"]), "%+.2f" % np.mean(st["de"]),
                         "-" if math.isnan(cb) else "%.2f" % cb, "-" if math.isnan(ca) else "%.2f" % ca])
            csv.append([a, t, n, st["exact"], st["wider"], st["narrower"], st["shifted"], np.mean(st["ds"]), np.mean(st["de"]), cb, ca])
    return _md(header, rows), (["network", "feature_type", "found", "exact", "wider", "narrower", "shifted",
                                "start_offset_mean", "end_offset_mean", "corr_before_mean", "corr_after_mean"], csv)


def _options(opts):
    """An explain call's options as text: 'defaults' for none."""
    return ", ".join("%s=%s" % (k, opts[k]) for k in sorted(opts)) if opts else "defaults"


def cost(records):
    """Model calls per method, and the permutation draws of each family of tests against their caps."""
    header = ["network", "method", "test family", "tests", "draws", "draws at the caps", "saved", "model calls",
              "problems"]
    rows, csv = [], []
    for a in _archs(records):
        rs = [r for r in records if r["arch"] == a]
        for m in sorted(rs[0]["explanations"], key=lambda m: (list(METHOD_LABELS).index(m) if m in METHOD_LABELS else 99, m)):
            es = [r["explanations"][m] for r in rs]
            calls = [e["model_calls"] for e in es]
            fams = []
            for e in es:
                for c in e["draws"]:
                    if c["test"] not in fams:
                        fams.append(c["test"])
            groups = fams + (["all"] if len(fams) > 1 else [])
            for n, f in enumerate(groups):
                cs = [c for e in es for c in e["draws"] if f == "all" or c["test"] == f]
                tests = [sum(c["tests"] for c in e["draws"] if f == "all" or c["test"] == f) for e in es]
                dr = sum(c["draws"] for c in cs)
                mx = sum(c["max_draws"] for c in cs)
                saved = 1 - dr / mx if mx else 0.0
                last = n == len(groups) - 1  # the method's model calls go on its last row
                rows.append([a.upper(), METHOD_LABELS.get(m, m), f, _ms(tests, 1), dr, mx, "%.1f%%" % (100 * saved),
                             _ms(calls, 0) if last else "", len(rs)])
                csv.append([a, m, f, float(np.mean(tests)), dr, mx, saved,
                            float(np.mean(calls)) if last else "", _sd(calls) if last else "", len(rs)])
            if not fams:  # no permutation tests (SAGE-m)
                rows.append([a.upper(), METHOD_LABELS.get(m, m), "-", "-", "-", "-", "-", _ms(calls, 0), len(rs)])
                csv.append([a, m, "", "", "", "", "", float(np.mean(calls)), _sd(calls), len(rs)])
    return _md(header, rows), (["network", "method", "test_family", "tests_mean", "draws", "max_draws", "saved",
                                "model_calls_mean", "model_calls_sd", "problems"], csv)


def write(out, cfg, records):
    """Writes the tables of the records into out."""
    records = sorted(records, key=lambda r: (r["arch"], r["problem"]))
    arch_order = list(cfg["archs"])
    records.sort(key=lambda r: (arch_order.index(r["arch"]) if r["arch"] in arch_order else 99, r["problem"]))
    sections = []

    def save(name, md, csv, title, note=""):
        with open(os.path.join(out, name + ".md"), "w") as f:
            f.write(md)
        write_csv(os.path.join(out, name + ".csv"), *csv)
        sections.append("## %s\n\n%s%s\n" % (title, note + "\n\n" if note else "", md))

    md, csv = networks(records)
    save("networks", md, csv, "Networks", "AUROC mean (SD) over problems, on the train (%d), test (%d) and holdout (%d) "
         "instances of each problem; the generator's model is the problem's own additive model, whose irrelevant "
         "features carry noise β (the labels use β = 0)." % (cfg["train"], cfg["test"], cfg["holdout"]))
    md, csv, per = detection(records)
    save("detection", md, csv, "Explanations against the generator's truth",
         "Mean (SD) over problems, scored by `tempora evaluate` (TIME: every cell of its important features' "
         "windows; PERM, SAGE-m: the top-n cells and features, n the number of true ones).")
    write_csv(os.path.join(out, "detection-per-problem.csv"), *per)
    md, csv = cost(records)
    save("cost", md, csv, "Model calls and permutation draws",
         "Tests: mean per problem. Draws and draws at the caps: totals over the problems; a test at its cap (its "
         "family's P_max, or the fixed P) draws every permutation, a sequential test stops once its outcome is clear. "
         "Saved: the fraction of the draws at the caps not needed. Model calls: mean (SD) per problem.")
    md, csv = time_details(records)
    save("time-windows", md, csv, "TIME: windows and orderings",
         "Windows exact: relevant features TIME found whose window equals the generator's.")
    md, csv = window_ordering(records)
    save("window-ordering", md, csv, "Window ordering: the network against the generator",
         "The generator's max and average are unchanged when the window's timesteps are reordered; weighted sums are "
         "not. TIME tests the network, whose approximation of a max or an average need not be order-invariant. A window "
         "wider than the generator's also makes reordering matter (values move in and out of the true window), so the "
         "last two columns keep the features whose window TIME found exactly.")
    md, csv = windows(records)
    save("windows-by-type", md, csv, "TIME's windows of relevant features, by feature type",
         "Relevant features TIME found, by generator type. Offsets are TIME's window start (end) minus the "
         "generator's; wider = contains the true window. The last two columns are the largest |correlation| between "
         "the feature's value at a timestep before (after) its window and its window aggregate, on the training "
         "split, averaged over the features that have such timesteps: how much a network can learn about the "
         "window from outside it.")
    md, csv = reliance(records)
    save("reliance", md, csv, "Which relevant features the networks rely on",
         "Relevant features bucketed by the fraction of training labels that change when the feature's term is "
         "removed from the generator's labelling function.")
    md, csv = found_by_type(records)
    save("found-by-type", md, csv, "Relevant features found, by feature type",
         "TIME found: among TIME's important features. PERM top-k: among the k top PERM features of set (c), k the "
         "size of TIME's set; PERM top-n: among the n top PERM features, n the number of relevant features (what "
         "PERM's feature power scores).")
    md, csv, per = selection(records)
    save("selection", md, csv, "The retraining check (holdout AUROC)",
         "Mean (SD) over problems; (d) is the mean over the random draws of each problem.")
    write_csv(os.path.join(out, "selection-per-problem.csv"), *per)
    md, csv = paired(records)
    save("selection-paired", md, csv, "TIME's feature set against the others, problem by problem")

    stages = ("train", "time", "perm", "sage-m", "retrain")
    timing = [[r["arch"], r["problem"]] + [r["timing"].get(k, {}).get(c, float("nan")) for k in stages for c in ("wall", "cpu")]
              for r in records]
    write_csv(os.path.join(out, "timing.csv"), ["network", "problem"] +
              [k.replace("-", "_") + "_" + c + "_s" for k in stages for c in ("wall", "cpu")], timing)

    s = dict(cfg)
    settings = ", ".join("%s %s" % (k, s[k]) for k in ("scale", "seed", "threads", "problems", "features", "timesteps",
                                                        "train", "test", "holdout", "random_sets"))
    settings += ", widths %s, epochs %s, methods %s, options %s" % (
        {a: s["width"][a] for a in s["archs"]}, {a: s["epochs"][a] for a in s["archs"]}, ",".join(s["methods"]),
        "; ".join("%s %s" % (METHOD_LABELS.get(m, m), _options(s["options"].get(m, {}))) for m in s["methods"]))
    with open(os.path.join(out, "index.md"), "w") as f:
        f.write("# Learned networks on synthetic problems: explanations and the retraining check\n\n")
        f.write("Written by examples/pytorch/learned.py from the records in runs/. Settings: %s.\n\n" % settings)
        f.write("![holdout AUROC per feature set](selection.png)\n\n![power and FDR per method](detection.png)\n\n")
        f.write("\n".join(sections))
