#!/usr/bin/env python3
"""TIME through the Python package against a yardstick, grouped permutation
importance, on one model and data set, measured side by side in one run.

    make build && TEMPORA=bin/tempora python3 python/bench/time_vs_permutation.py [--case lstm]

(any Python with NumPy, and PyTorch for --case lstm; the package is taken
from this source tree unless installed). The cases (one file each):

- sum (the default, sum_case.py): issue 22's regression problem,
  500 x 100 x 200 with 5 relevant features, a NumPy model (the weighted sum
  of each relevant feature's mean over its window);
- lstm (lstm_case.py): issue 34's, an LSTM (12 -> 32 hidden, then a linear
  layer) trained briefly with PyTorch (CPU, one thread) on 2000 x 12 x 48
  regression data with 3 relevant features in windows and explained on a
  test set of that shape it never saw; its fit on both is printed.

The yardstick (yardsticks.py) is by default grouped permutation importance
written with NumPy (each feature's block permuted across instances,
5 repeats); --yardstick sklearn uses scikit-learn's permutation_importance
instead, which is slower (it turns object columns back into arrays
for every call) and so flatters TIME.

For TIME (tempora.explain, default settings) and for the yardstick it
prints the wall time; the CPU time of this Python process (getrusage
RUSAGE_SELF) and of the tempora program (RUSAGE_CHILDREN, read once the
program has exited and been reaped) and their total; the time inside
predict (wall and the CPU of the thread that runs it), the model calls and
the instance evaluations; and their ratios TIME / yardstick, all from the
same run. --json FILE writes the figures with the command, the machine and
its load average; --markdown FILE prints a JSON file's figures as
docs/benchmarks.md states them.

--batch N|auto and --tests T pass TIME's batch and tests (a costly model's
choices: --batch auto --tests anytime); --shape M,D,L and --relevant K run
other sizes; --max-time S stops TIME
once it has run S seconds (its predict raises), and the figures are then
those until the stop, marked as such (TIME on the LSTM at full shape takes
more than 1,500 s); --work-us U (case sum) adds U µs of CPU per instance to
the model.
"""

import argparse
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

# The models run on one thread: torch.set_num_threads(1) (case lstm) does
# not reach OpenBLAS's own pool, which would add a thread to predict (whose
# CPU the thread's clock would then miss); the variables must be set before
# NumPy or PyTorch loads OpenBLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import tempora  # noqa: E402

import lstm_case  # noqa: E402
import sum_case  # noqa: E402
from yardsticks import YARDSTICKS  # noqa: E402

# name -> module with DEFAULT_SHAPE, DEFAULT_RELEVANT and make(shape,
# relevant, seed, args) -> (X, y, predict, features, windows, info).
CASES = {"sum": sum_case, "lstm": lstm_case}

# The figures measured for TIME and for the yardstick, in the order printed.
FIGURES = [
    ("wall_s", "wall s"),
    ("python_cpu_s", "CPU Python s"),
    ("program_cpu_s", "CPU tempora s"),
    ("cpu_s", "CPU total s"),
    ("predict_s", "in predict s"),
    ("predict_cpu_s", "predict CPU s"),
    ("model_calls", "model calls"),
    ("instance_evaluations", "instance evaluations"),
]


class Stopped(Exception):
    """predict was called after the run's --max-time."""


class Timed:
    """predict, with the time spent inside it (wall, and the CPU of the
    thread that runs it), its calls and instances counted, and an optional
    deadline after which it raises Stopped."""

    def __init__(self, f, deadline=None):
        self.f, self.deadline, self.stopped = f, deadline, False
        self.seconds, self.cpu, self.calls, self.instances, self.faults = 0.0, 0.0, 0, 0, 0

    def __call__(self, batch):
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.stopped = True
            raise Stopped("--max-time reached")
        t, c, f = time.perf_counter(), time.thread_time(), thread_faults()
        try:
            return self.f(batch)
        finally:
            self.cpu += time.thread_time() - c
            self.seconds += time.perf_counter() - t
            self.faults += thread_faults() - f
            self.calls += 1
            self.instances += len(batch)


def thread_faults():
    """The page faults (minor and major) of the calling thread so far, 0
    where the system does not count them per thread (RUSAGE_THREAD is
    Linux's)."""
    who = getattr(resource, "RUSAGE_THREAD", None)
    if who is None:
        return 0
    r = resource.getrusage(who)
    return r.ru_minflt + r.ru_majflt


def usage():
    """Wall clock, this process's CPU and its reaped children's CPU."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


def measured(run, timed):
    """Run run() and return its result (None if predict stopped it) and the
    figures. tempora.explain waits for the program (and kills and reaps it
    when predict fails) before it returns or raises, so that the children's
    CPU read after it holds the program's."""
    before = usage()
    try:
        result = run()
    except Exception:
        if not timed.stopped:
            raise
        result = None
    after = usage()
    fig = {"wall_s": after[0] - before[0], "python_cpu_s": after[1] - before[1],
           "program_cpu_s": after[2] - before[2], "predict_s": timed.seconds, "predict_cpu_s": timed.cpu,
           "model_calls": timed.calls, "instance_evaluations": timed.instances, "predict_faults": timed.faults,
           "finished": result is not None}
    fig["cpu_s"] = fig["python_cpu_s"] + fig["program_cpu_s"]
    return result, fig


def fixed_costs(X):
    """What a run pays whatever its draws, measured apart: writing X as
    .npy where tempora.explain writes it, and the program's start with
    reading it back (tempora describe -data)."""
    from tempora import _explain
    exe = tempora.find_binary()
    with tempfile.TemporaryDirectory(prefix="tempora-bench-", dir=_explain._scratch_dir(X.nbytes)) as tmp:
        path = os.path.join(tmp, "X.npy")
        t = time.perf_counter()
        np.save(path, X)
        save = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run([exe, "describe", "-data", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        read = time.perf_counter() - t
    return {"save_s": save, "program_read_s": read}


def machine():
    """The machine, as a run's record states it."""
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {"system": "%s %s" % (platform.system(), platform.machine()), "cpus": os.cpu_count(),
            "cpu": cpu, "python": platform.python_version(), "numpy": np.__version__}


def run_time(predict, X, y, feats, windows, args):
    """TIME through the package, default settings (the program's method
    table is read first, as a session's first explain call would, so that
    the figures hold only the explain call)."""
    tempora.method_table()
    deadline = time.perf_counter() + args.max_time if args.max_time else None
    timed = Timed(predict, deadline)
    ex, fig = measured(lambda: tempora.explain(timed, X, y, task="regression", seed=args.seed, progress=False,
                                                       **time_options(args)),
                       timed)
    if ex is None:
        return fig
    e = ex.to_dict()
    acc = e["accounting"]
    # The program's own count of the calls it made and the evaluations it
    # asked for; they must be the ones predict saw.
    if (acc["model_calls"], acc["instance_evaluations"]) != (timed.calls, timed.instances):
        raise SystemExit("the explanation's accounting (%d calls, %d evaluations) differs from predict's "
                         "(%d, %d)" % (acc["model_calls"], acc["instance_evaluations"], timed.calls, timed.instances))
    found = {f["index"] for f in e["features"] if f["important"]}
    fig["draws"] = sum(c["draws"] for c in acc.get("draws", []))
    fig["draws_by_test"] = {c["test"]: c["draws"] for c in acc.get("draws", [])}
    fig["found"] = len(found & set(feats))
    fig["false"] = len(found - set(feats))
    fig["exact_windows"] = sum(1 for f in e["features"] if f["important"] and f["index"] in feats
                               and f.get("window") is not None
                               and tuple(f["window"]) == tuple(windows[feats.index(f["index"])]))
    fig["windows"] = {str(f["index"]): f.get("window") for f in e["features"] if f["important"]}
    return fig


def time_options(args):
    """The explain keywords of --batch, --tests, --windows and
    --model-timeout (none by default)."""
    opts = {}
    if args.model_timeout:
        opts["model_timeout"] = args.model_timeout
    if args.windows:
        opts["windows"] = args.windows
    if args.batch:
        opts["batch"] = args.batch
    if args.tests:
        opts["tests"] = args.tests
    return opts


def run_yardstick(predict, X, y, feats, args):
    fn, _ = YARDSTICKS[args.yardstick]
    timed = Timed(predict)
    imp, fig = measured(lambda: fn(timed, X, y, args.repeats, args.seed), timed)
    top = [int(j) for j in np.argsort(-imp.mean(axis=1), kind="stable")[:len(feats)]]
    fig["top"] = top
    fig["top_relevant"] = len(set(top) & set(feats))
    return fig


def ratios(ti, yi):
    return {k: ti[k] / yi[k] if yi[k] else None for k, _ in FIGURES}


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, int):
        return "{:,}".format(v)
    return "%.3g" % v if abs(v) < 1000 else "{:,.0f}".format(v)


def markdown(res):
    """The run's figures as docs/benchmarks.md states them."""
    ti, yi, ra = res["time"], res["yardstick"], res["ratio"]
    m, d, l = res["shape"]
    stop = "" if ti["finished"] else " (stopped at --max-time: figures until the stop)"
    lines = [
        "`%s` on %s, %d CPUs (%s), load average %.1f before and %.1f after the run; %d × %d × %d, "
        "relevant features %s; %s." % (
            res["command"], res["machine"]["system"], res["machine"]["cpus"], res["machine"]["cpu"],
            res["load"][0], res["load"][1], m, d, l, res["relevant"], res["info"]["model"]),
        "",
        "| | " + " | ".join(label for _, label in FIGURES) + " |",
        "| --- |" + " --- |" * len(FIGURES),
        "| TIME%s | " % stop + " | ".join(fmt(ti[k]) for k, _ in FIGURES) + " |",
        "| yardstick: %s | " % res["yardstick_label"] + " | ".join(fmt(yi[k]) for k, _ in FIGURES) + " |",
        "| TIME / yardstick | " + " | ".join(fmt(ra[k]) for k, _ in FIGURES) + " |",
        "",
    ]
    k = len(res["relevant"])
    found = ("TIME found %d of the %d relevant features (%d false, %d exact windows) in %s draws" % (
        ti["found"], k, ti["false"], ti["exact_windows"], fmt(ti["draws"]))
        if ti["finished"] else "TIME had not finished")
    if ti["finished"]:
        found += " (%s), windows %s (the generator's %s)" % (
            ", ".join("%s %s" % (t, fmt(n)) for t, n in ti["draws_by_test"].items()),
            ", ".join("%s: %s" % (j, "[%d, %d]" % tuple(w) if w else "none")
                      for j, w in sorted(ti["windows"].items(), key=lambda kv: int(kv[0]))),
            ", ".join("%d: [%d, %d]" % (j, w[0], w[1]) for j, w in zip(res["relevant"], res["windows"])))
    found += "; page faults inside predict: TIME %s (%s per call), yardstick %s (%s per call)" % tuple(
        v for fig in (ti, yi) for v in (fmt(fig["predict_faults"]), fmt(fig["predict_faults"] / max(1, fig["model_calls"]))))
    fit = ""
    if "test_r2" in res["info"]:
        fit = "; the model's fit: R² %.3f on its training set, %.3f on the test set explained" % (
            res["info"]["train_r2"], res["info"]["test_r2"])
    lines.append("%s; the yardstick's top %d held %d of the %d relevant features%s." % (
        found, k, yi["top_relevant"], k, fit))
    return "\n".join(lines) + "\n"


def report(res):
    """The run's figures, as printed."""
    name = max(len("TIME / yardstick"), len(res["yardstick_label"]) + 11)
    rows = [("", [label for _, label in FIGURES])]
    for title, fig in (("TIME", res["time"]), ("yardstick: " + res["yardstick_label"], res["yardstick"]),
                       ("TIME / yardstick", res["ratio"])):
        rows.append((title, [fmt(fig[k]) for k, _ in FIGURES]))
    width = [max(len(r[1][i]) for r in rows) for i in range(len(FIGURES))]
    out = []
    for title, cells in rows:
        out.append(title.ljust(name) + "  " + "  ".join(c.rjust(w) for c, w in zip(cells, width)))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted(CASES), default="sum", help="the problem and model (default sum)")
    ap.add_argument("--shape", help="M,D,L (default: the case's: sum 500,100,200, lstm 2000,12,48)")
    ap.add_argument("--relevant", type=int, help="relevant features (default: the case's, sum 5, lstm 3)")
    ap.add_argument("--yardstick", choices=sorted(YARDSTICKS), default="numpy",
                    help="numpy (default): grouped permutation importance with NumPy; sklearn: scikit-learn's "
                         "permutation_importance, slower, which flatters TIME")
    ap.add_argument("--repeats", type=int, default=5, help="permutation importance repeats")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-time", type=float, default=0, help="stop TIME after this many seconds (0: no limit)")
    ap.add_argument("--batch", default="", help='TIME\'s batch: instances per predict call, or "auto" (default: the whole data)')
    ap.add_argument("--tests", default="", help="TIME's tests (default: the program's default)")
    ap.add_argument("--model-timeout", default="",
                    help="TIME's model_timeout (default: the package's, predict in a helper thread; 0: in this thread)")
    ap.add_argument("--windows", type=int, default=0,
                    help="TIME's most windows per feature (default: the program's default; 1: the paper's single window)")
    ap.add_argument("--epochs", type=int, default=12, help="training epochs (case lstm)")
    ap.add_argument("--work-us", type=float, default=0.0,
                    help="µs of CPU per instance added to the model (case sum; default 0)")
    ap.add_argument("--no-fixed", action="store_true", help="skip measuring the fixed costs apart")
    ap.add_argument("--json", help="also write the figures as JSON to this file")
    ap.add_argument("--markdown", metavar="FILE", help="print FILE's figures (a --json output) as docs state them")
    args = ap.parse_args()
    if args.markdown:
        with open(args.markdown) as f:
            sys.stdout.write(markdown(json.load(f)))
        return
    case = CASES[args.case]
    shape = tuple(int(v) for v in args.shape.split(",")) if args.shape else case.DEFAULT_SHAPE
    relevant = args.relevant or case.DEFAULT_RELEVANT
    load = [os.getloadavg()[0]]
    X, y, predict, feats, windows, info = case.make(shape, relevant, args.seed, args)
    argv = sys.argv[1:]
    if "--json" in argv:  # the command that reproduces the figures, without where they were written
        del argv[argv.index("--json"):argv.index("--json") + 2]
    argv = [a for a in argv if not a.startswith("--json=")]
    res = {"command": " ".join(["python3 python/bench/time_vs_permutation.py"] + [shlex.quote(a) for a in argv]),
           "machine": machine(), "case": args.case, "shape": list(shape), "relevant": feats,
           "windows": [list(w) for w in windows], "info": info, "yardstick_name": args.yardstick,
           "yardstick_label": YARDSTICKS[args.yardstick][1], "repeats": args.repeats}
    res["time"] = run_time(predict, X, y, feats, windows, args)
    res["yardstick"] = run_yardstick(predict, X, y, feats, args)
    res["ratio"] = ratios(res["time"], res["yardstick"])
    if not args.no_fixed:
        res["fixed"] = fixed_costs(X)
    load.append(os.getloadavg()[0])
    res["load"] = load

    ti, yi = res["time"], res["yardstick"]
    print("case %s: %d x %d x %d, relevant features %s, windows %s; %s" % (
        args.case, *shape, feats, res["windows"], info["model"]))
    if "test_r2" in info:
        print("fit: R^2 %.3f on the training set, %.3f on the test set explained (%d epochs)" % (
            info["train_r2"], info["test_r2"], info["epochs"]))
    if args.work_us:
        print("the model spends %g µs more CPU per instance" % args.work_us)
    print(report(res))
    if ti["finished"]:
        print("TIME: %d draws; found %d of %d, %d false, %d exact windows" % (
            ti["draws"], ti["found"], len(feats), ti["false"], ti["exact_windows"]))
    else:
        print("TIME: stopped at --max-time %g s, not finished (the figures are those until the stop)" % args.max_time)
    print("yardstick: top %d: %s, %d relevant" % (len(feats), yi["top"], yi["top_relevant"]))
    print("page faults inside predict: TIME %d, yardstick %d" % (ti["predict_faults"], yi["predict_faults"]))
    if "fixed" in res:
        print("fixed: np.save of X %.2f s, program start + reading X (tempora describe) %.2f s" % (
            res["fixed"]["save_s"], res["fixed"]["program_read_s"]))
    print("machine: %s, %d CPUs (%s); load average %.1f before, %.1f after" % (
        res["machine"]["system"], res["machine"]["cpus"], res["machine"]["cpu"], load[0], load[1]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
