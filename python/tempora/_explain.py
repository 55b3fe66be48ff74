"""tempora.explain: run the tempora program on data and a model held in this
Python process.

The program is started with ``explain -data X.npy -targets y.npy -model-fd
SOCK:BUF,...``: each model connection is one end of a socketpair inherited
by the program, plus a shared memory buffer (a memfd on Linux) into which the
program writes the values of each batch, so that a batch crosses without
being copied through the socket. This process answers the connection with
predict until the program closes it (docs/protocol.md, "Connections and
shared buffers").
"""

import datetime
import json
import mmap
import multiprocessing
import os
import pickle
import signal
import socket
import subprocess
import tempfile

import numpy as np

from . import _calls, _protocol
from ._binary import ModelError, StderrTail, TemporaError, find_binary
from ._explanation import Explanation

TASKS = ("regression", "classification")

# Options with a keyword of their own, or set by explain itself: they may not
# be passed through **options.
_RESERVED = {"data", "targets", "task", "feature_names", "model_cmd", "model_fd", "model_procs",
             "model_timeout", "json", "csv", "problem", "method", "hierarchy"}

# The smallest shared buffer: batches of up to this many bytes cross through
# shared memory even when the data set is smaller (pages are only allocated
# when written, so a large buffer costs address space, not memory).
_MIN_SHARED_BYTES = 64 << 20


def _flag_value(key, value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.timedelta):
        return "%gs" % value.total_seconds()
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError("option %s=%r: want a number, a string, a bool or a timedelta" % (key, value))


def _duration(key, value):
    """A duration flag: numbers are seconds."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return "%gs" % float(value)
    return _flag_value(key, value)


def option_flags(options):
    """Turn keyword options into command-line flags: a_b=v becomes -a-b=v.
    None values are left out."""
    flags = []
    for key in sorted(options):
        value = options[key]
        if value is None:
            continue
        if key in _RESERVED:
            raise TypeError("explain() got option %r, which it sets itself or takes as a keyword" % key)
        flag = key.replace("_", "-")
        text = _duration(key, value) if key in ("budget",) else _flag_value(key, value)
        flags.append("-%s=%s" % (flag, text))
    return flags


class _Fd:
    """A file descriptor that multiprocessing passes to a child process
    (duplicated into it when the child is spawned)."""

    def __init__(self, fd):
        self.fd = fd

    def __reduce__(self):
        from multiprocessing import reduction
        return (_rebuild_fd, (reduction.DupFd(self.fd),))


def _rebuild_fd(dup):
    return _Fd(dup.detach())


class _Connection:
    """One model connection: a socketpair (our end, the program's end) and
    a shared buffer."""

    def __init__(self, shared_bytes):
        self.ours, self.theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.buf_fd = _shared_fd(shared_bytes)
        self.size = shared_bytes
        self.mm = None

    def spec(self):
        return "%d:%d" % (self.theirs.fileno(), self.buf_fd)

    def fds(self):
        return [self.theirs.fileno(), self.buf_fd]

    def map(self):
        self.mm = mmap.mmap(self.buf_fd, self.size)
        return self.mm

    def close_theirs(self):
        self.theirs.close()

    def close(self):
        self.theirs.close()
        self.ours.close()
        if self.buf_fd >= 0:
            os.close(self.buf_fd)
            self.buf_fd = -1
        if self.mm is not None:
            try:
                self.mm.close()
            except BufferError:
                pass  # a batch view is still referenced; freed with it
            self.mm = None


def _shared_fd(size):
    """A file descriptor of size bytes of shared memory."""
    fd = -1
    if hasattr(os, "memfd_create"):
        try:
            fd = os.memfd_create("tempora-batch", getattr(os, "MFD_CLOEXEC", 0))
        except OSError:
            fd = -1
    if fd < 0:
        d = "/dev/shm" if os.path.isdir("/dev/shm") else None
        with tempfile.TemporaryFile(dir=d) as f:
            fd = os.dup(f.fileno())
    os.ftruncate(fd, size)
    return fd


def _worker_main(sock, buf, size, target, is_factory, inherited):
    """Serve one model connection in a separate process (model_procs > 1).
    inherited lists descriptors a forked worker must close (the other
    connections), so that only their owners keep them open."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us by closing the connection
    for fd in inherited:
        try:
            os.close(fd)
        except OSError:
            pass
    conn = socket.socket(fileno=sock.fd)
    mm = mmap.mmap(buf.fd, size)
    os.close(buf.fd)
    if is_factory:
        try:
            predict = target()
        except Exception as exc:
            message = "model_factory raised %s: %s" % (type(exc).__name__, exc)

            def predict(batch):
                raise RuntimeError(message)
    else:
        predict = target
    try:
        _protocol.serve_socket(predict, conn, shared=mm)
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        conn.close()


def explain(predict, X, y, task=None, method="time", *, feature_names=None, hierarchy=None,
            permutations=None, sequential=None, alpha=None, gamma=None, seed=None, workers=None,
            model_procs=1, model_factory=None, mp_context="spawn", model_timeout=None,
            binary=None, verbose=False, **options):
    """Explain the model predict on data X with targets y; return an Explanation.

    predict(batch) receives a float64 array of shape (m, D, L) (instances,
    features, timesteps) and returns m predictions: probabilities of class
    1 for task="classification", values for task="regression" (any array
    numpy.asarray accepts, shape (m,) or (m, 1); a PyTorch tensor is
    detached first). It runs in this process, so a model held in a notebook
    is used as is. The batch is only valid during the call (it may be a view
    of shared memory); copy it to keep it. predict must give each instance
    the same prediction whatever batch it comes in.

    X has shape (M, D, L) and y shape (M,). method is one of time (TIME,
    the default), lime, sage, sage-m, sage-z, perm, perm-f.

    Options map to the program's flags (``tempora explain -h``):
    permutations, sequential, alpha, gamma, seed, workers; feature_names (D strings);
    sequential=False with permutations=50 gives the paper's fixed-P tests
    (by default every test stops once its outcome is clear, capped at
    permutations, 0 or None choosing a cap per family of tests);
    hierarchy (a feature-group tree as a dict or list, in the JSON form of
    ``-hierarchy``, or the path of such a file); model_timeout (seconds, or a
    string such as "10m": the limit on one batch, 10 minutes by default, 0
    for none). Other keyword options
    are passed as flags, with underscores turned into dashes (e.g.
    instances_explained=10, budget=60, max_permutations=500); the program
    rejects unknown ones and those that do not apply to the method.

    model_procs=N answers batches with N processes in parallel: this one
    (with predict) and N-1 started through multiprocessing (context
    mp_context, "spawn" by default), each with model_factory() if given
    (called once per process, e.g. to load a network) or else with predict
    itself. Under "spawn" and "forkserver" the factory or predict must be
    picklable (a module-level function or an instance of a module-level
    class) and a script must guard its top level with
    ``if __name__ == "__main__":``. The explanation does not depend on N.

    The program is found through binary (a path), the TEMPORA environment
    variable, or PATH. verbose=True copies its progress (standard error) to
    sys.stderr.

    Raises ModelError (a TemporaError) when predict fails, with the
    original exception as its cause; TemporaError with the program's
    message when the program fails; ValueError/TypeError for bad arguments.
    On KeyboardInterrupt the program and the model processes are stopped
    before the interrupt propagates.

    predict runs in a helper thread of this process (the same one for every
    batch) while the calling thread waits, so that neither a hung predict
    nor Ctrl-C can block the caller: a call longer than model_timeout
    raises ModelTimeoutError (a ModelError), a KeyboardInterrupt during a
    call raises ModelInterrupt (a KeyboardInterrupt); both name the call and
    the batch size. Python cannot stop a thread, so such a call is left
    running in its (daemon) thread until predict returns. With
    model_timeout=0 predict runs in the calling thread instead (for models
    that need it), and a hung predict then blocks the caller.
    """
    shared_bytes = options.pop("_shared_bytes", None)  # for tests
    if predict is None and model_factory is not None:
        predict = model_factory()
    if not callable(predict):
        raise TypeError("predict must be callable, got %r" % (predict,))
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 3 or min(X.shape) == 0:
        raise ValueError("X must have shape (instances, features, timesteps), none zero; got %s" % (X.shape,))
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.reshape(-1)
    if y.shape != (X.shape[0],):
        raise ValueError("y must have shape (%d,) to match X; got %s" % (X.shape[0], y.shape))
    if task not in TASKS:
        raise ValueError("task must be 'regression' or 'classification', got %r" % (task,))
    if isinstance(model_procs, bool) or not isinstance(model_procs, (int, np.integer)) or model_procs < 1:
        raise ValueError("model_procs must be a positive integer, got %r" % (model_procs,))
    model_procs = int(model_procs)
    if feature_names is not None:
        feature_names = [str(n) for n in feature_names]
        if len(feature_names) != X.shape[1]:
            raise ValueError("%d feature names for %d features" % (len(feature_names), X.shape[1]))
        for n in feature_names:
            if "\n" in n or "\r" in n or n.strip() != n or not n:
                raise ValueError("feature name %r: names must be non-empty, on one line, without surrounding blanks" % n)
    flags = option_flags(dict(options, permutations=permutations, sequential=sequential, alpha=alpha, gamma=gamma, seed=seed,
                              workers=workers))
    if model_timeout is not None:
        flags.append("-model-timeout=" + _duration("model_timeout", model_timeout))

    target, is_factory, ctx = None, False, None
    if model_procs > 1:
        target, is_factory = (model_factory, True) if model_factory is not None else (predict, False)
        ctx = multiprocessing.get_context(mp_context)
        if ctx.get_start_method() != "fork":
            try:
                pickle.dumps(target)
            except Exception as exc:
                what = "model_factory" if is_factory else "predict"
                raise ValueError(
                    "model_procs=%d needs a picklable %s to re-create the model in other processes "
                    "(a module-level function or class instance), or mp_context='fork': %s"
                    % (model_procs, what, exc)) from exc

    exe = find_binary(binary)
    if shared_bytes is None:
        shared_bytes = max(2 * X.nbytes, _MIN_SHARED_BYTES)  # two requests in flight
    shared_bytes = max(8, -(-int(shared_bytes) // mmap.PAGESIZE) * mmap.PAGESIZE)

    with tempfile.TemporaryDirectory(prefix="tempora-") as tmp:
        x_path, y_path = os.path.join(tmp, "X.npy"), os.path.join(tmp, "y.npy")
        json_path, out_path = os.path.join(tmp, "explanation.json"), os.path.join(tmp, "report.txt")
        np.save(x_path, X)
        np.save(y_path, y)
        args = [exe, "explain", "-data", x_path, "-targets", y_path, "-task", task, "-method", str(method),
                "-json", json_path]
        if feature_names is not None:
            names_path = os.path.join(tmp, "names.txt")
            with open(names_path, "w", encoding="utf-8") as f:
                f.write("\n".join(feature_names) + "\n")
            args += ["-feature-names", names_path]
        if hierarchy is not None:
            if isinstance(hierarchy, (str, os.PathLike)):
                args += ["-hierarchy", os.fspath(hierarchy)]
            else:
                h_path = os.path.join(tmp, "hierarchy.json")
                with open(h_path, "w", encoding="utf-8") as f:
                    json.dump(hierarchy, f)
                args += ["-hierarchy", h_path]
        args += flags
        guard = _calls.Guard(predict, _calls.seconds(model_timeout))  # model_timeout and Ctrl-C (_calls.py)
        try:
            return _run(args, guard, model_procs, shared_bytes, target, is_factory, ctx, verbose, json_path, out_path)
        finally:
            guard.close()


def _run(args, predict, n, shared_bytes, target, is_factory, ctx, verbose, json_path, out_path):
    conns, proc, tail, procs = [], None, None, []
    first = None
    try:
        for _ in range(n):
            conns.append(_Connection(shared_bytes))
        args = args + ["-model-fd", ",".join(c.spec() for c in conns)]
        fds = [fd for c in conns for fd in c.fds()]
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE,
                                    pass_fds=fds)
        tail = StderrTail(proc.stderr, echo=verbose)
        for c in conns:
            c.close_theirs()
        forked = ctx.get_start_method() == "fork" if ctx is not None else False
        for c in conns[1:]:
            others = [fd for o in conns if o is not c for fd in (o.ours.fileno(), o.buf_fd) if fd >= 0] if forked else []
            p = ctx.Process(target=_worker_main, args=(_Fd(c.ours.fileno()), _Fd(c.buf_fd), c.size, target, is_factory, others),
                            name="tempora-model", daemon=True)
            p.start()
            procs.append(p)
            c.close()  # the worker holds its own copies
        main = conns[0]
        try:
            first = _protocol.serve_socket(predict, main.ours, shared=main.map())
        except (BrokenPipeError, ConnectionResetError):
            pass  # the program ended; its exit status tells why
        except _protocol.ProtocolError as exc:
            raise TemporaError("model protocol: %s" % exc) from None
        main.close()
        proc.wait()
        tail.join()
        for p in procs:
            p.join(5)
    except BaseException:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in procs:
            if p.is_alive():
                p.kill()
            p.join()
        raise
    finally:
        for c in conns:
            c.close()
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
        if tail is not None:
            tail.join()

    if proc.returncode != 0:
        msg = tail.error_message(proc.returncode)
        if first is not None:
            _calls.reraise(first)  # a time-out is raised as it is
            raise ModelError(_protocol.describe_exception(first)) from first
        if "model reported an error" in msg or "model process exited" in msg:
            raise ModelError(msg)
        raise TemporaError(msg)
    with open(json_path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    with open(out_path, "rb") as f:
        report = f.read().decode("utf-8", "replace")
    return Explanation(doc, report=report)
