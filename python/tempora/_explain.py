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
import functools
import json
import mmap
import multiprocessing
import multiprocessing.context
import os
import pickle
import signal
import socket
import subprocess
import tempfile
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _calls, _errors, _input, _outputs, _progress, _protocol, _scratch
from ._attributions import Attributions
from ._binary import ModelError, StderrTail, StrPath, TemporaError, find_binary, run
from ._explanation import Explanation
from ._methods import command_flags, method_table
from ._protocol import Predict

TASKS = ("regression", "classification")

#: A feature-group hierarchy: the JSON form of ``-hierarchy`` (a dict or a
#: list), or the path of such a file.
Hierarchy = Union[StrPath, Mapping[str, Any], Sequence[Any]]

#: A duration: seconds, a datetime.timedelta, or Go duration text ("10m").
Duration = Union[float, "datetime.timedelta", str]

# The smallest shared buffer: batches of up to this many bytes cross through
# shared memory even when the data set is smaller (pages are only allocated
# when written, so a large buffer costs address space, not memory).
_MIN_SHARED_BYTES = 64 << 20


#: The flags explain sets for itself, spelt by no keyword of the caller's
#: (the data files, the explanation's file, the protocol's descriptors).
_INTERNAL_FLAGS = frozenset(("data", "targets", "json", "errors", "progress", "model-fd"))


def keyword(flag: str) -> str:
    """The Python keyword of a flag or parameter name: its dashes as
    underscores (_methods.Param.keyword's rule)."""
    return flag.replace("-", "_")


def _own_flags(args: Sequence[str]) -> List[str]:
    """The flag names on a command line the package built."""
    return [a[1:].split("=", 1)[0] for a in args if a.startswith("-")]


class _Fd:
    """A file descriptor that multiprocessing passes to a child process
    (duplicated into it when the child is spawned)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> Any:
        from multiprocessing import reduction
        return (_rebuild_fd, (reduction.DupFd(self.fd),))


def _rebuild_fd(dup: Any) -> _Fd:
    return _Fd(dup.detach())


class _Connection:
    """One model connection: a socketpair (our end, the program's end) and
    a shared buffer."""

    def __init__(self, shared_bytes: int) -> None:
        self.ours, self.theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.buf_fd = _shared_fd(shared_bytes)
        self.size = shared_bytes
        self.mm: Optional[mmap.mmap] = None

    def spec(self) -> str:
        return "%d:%d" % (self.theirs.fileno(), self.buf_fd)

    def fds(self) -> List[int]:
        return [self.theirs.fileno(), self.buf_fd]

    def map(self) -> mmap.mmap:
        self.mm = mmap.mmap(self.buf_fd, self.size)
        return self.mm

    def close_theirs(self) -> None:
        self.theirs.close()

    def close(self) -> None:
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


def _shared_fd(size: int) -> int:
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


def _scratch_dir(nbytes: int) -> Optional[str]:
    """Where explain writes the data files for the program: /dev/shm (a
    memory file system) when it exists and has room for them twice over,
    unless TMPDIR chooses a directory; else (None) the default temporary
    directory. The data is written once, read by the program and mapped by
    the model side. On the 2-core development machine under load, writing
    80 MB took 0.05-0.13 s on /dev/shm, and on the disk-backed /tmp
    usually less (0.02-0.05 s) but 0.27-0.92 s in 4 of 17 writes, when
    other jobs wrote to the disk: /dev/shm bounds the worst case."""
    if os.environ.get("TMPDIR"):
        return None
    d = "/dev/shm"
    try:
        st = os.statvfs(d)
    except (OSError, AttributeError):
        return None
    if not os.access(d, os.W_OK | os.X_OK) or st.f_bavail * st.f_frsize < 2 * nbytes + (64 << 20):
        return None
    return d


def _held(x_path: Optional[str]) -> Optional["npt.NDArray[np.float64]"]:
    """The data file tempora reads (written by np.save), mapped
    copy-on-write: the model side's working copy of the data it holds from
    the start (docs/protocol.md), which costs no copy (pages are copied
    only where a block is applied) and leaves the caller's array alone.
    None if the file cannot be held so (tempora then sends the data)."""
    if x_path is None:
        return None
    try:
        x = np.asarray(np.load(x_path, mmap_mode="c"))
    except (OSError, ValueError):
        return None
    return x if _protocol.holdable(x) else None


def _worker_main(sock: _Fd, buf: _Fd, size: int, target: Callable[..., Any], is_factory: bool,
                 inherited: Sequence[int], x_path: Optional[str] = None, outputs: int = 0) -> None:
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
    predict: Predict
    if is_factory:
        try:
            predict = target()
        except Exception as exc:
            message = "model_factory raised %s: %s" % (type(exc).__name__, exc)

            def predict(batch: Any) -> Any:
                raise RuntimeError(message)
    else:
        predict = target
    try:
        _protocol.serve_socket(predict, conn, shared=mm, held=_held(x_path), **_announce(outputs))
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        conn.close()


#: scikit-learn's spellings of tempora's keywords, answered with a
#: TypeError that names the tempora equivalent.
_SKLEARN = {
    "random_state": "seed= (an int: the run seed of every random stream)",
    "n_jobs": "workers= (goroutines evaluating the model in the tempora program) or model_procs= (Python "
              "processes answering batches in parallel)",
    "n_repeats": "permutations= (TIME and PERM: the cap on permutations per test; TIME stops a test early once "
                 "its outcome is clear unless tests='fixed')",
    "scoring": "task= (the loss follows the task: squared error for 'regression', cross-entropy of the "
               "probability of the positive class for 'classification')",
    "n_permutations": "permutations=",
    "verbose_level": "progress= (True or False) or verbose= (the program's own messages)",
    "max_samples": "samples= (LIME) or instances_explained= (LIME, TimeSHAP)",
}


def explain(predict: Any, X: Any, y: Any, task: Optional[str] = None,
            method: Optional[str] = None, *, layout: str = "ndl", feature_names: Optional[Sequence[str]] = None,
            alignment: str = "start", mask: Any = None,
            instance_col: Any = None, time_col: Any = None, feature_col: Any = None, value_col: Any = None,
            entity_col: Any = None,
            classes: Optional[Sequence[Any]] = None, outputs: Optional[str] = None,
            output_names: Optional[Sequence[Any]] = None, output_anchors: Optional[Sequence[int]] = None,
            target: Any = None, hierarchy: Optional[Hierarchy] = None,
            seed: Optional[int] = None, workers: Optional[int] = None,
            model_procs: int = 1, model_factory: Optional[Callable[[], Predict]] = None, mp_context: str = "spawn",
            model_timeout: Optional[Duration] = None, binary: Optional[StrPath] = None, verbose: bool = False,
            progress: bool = True, **options: Any) -> Explanation:
    """Explain a model on data X with targets y.

    Parameters
    ----------
    predict : callable, estimator, torch.nn.Module or Keras-style model
        The model. A function receives a float64 batch in the layout of X
        (NumPy ``(m, D, L)`` for layout="ndl", ``(m, L, D)`` for "nld";
        ``(m, D, L)`` for a DataFrame X) and returns m predictions:
        probabilities of the positive class for task="classification",
        values for "regression" (any array numpy.asarray accepts, shape
        ``(m,)`` or ``(m, 1)``; ``(m, 2)`` class probabilities give the
        positive column). An object with ``predict_proba`` (classification)
        or ``predict`` (a scikit-learn estimator or pipeline) is called
        through it, and so is a bound ``model.predict_proba``, whose column
        for the positive class is found through the model's ``classes_``. A
        fitted estimator whose ``n_features_in_`` is features x timesteps
        is given each instance flattened, ``X.reshape(len(X), -1)`` of X
        in its layout (feature-major for "ndl" and a DataFrame: column
        ``j*L + t`` is feature j at timestep t; time-major for "nld"); one
        whose ``n_features_in_`` is ``X.shape[1]`` (fitted on X's own 3-D
        arrays) is given the batches as they are; another width is a
        ValueError. A PyTorch module whose
        first layer (LSTM/GRU/RNN ``input_size``, Conv1d ``in_channels``)
        reads as many features as X has timesteps, and not as many as it
        has features, is refused, naming layout=. A
        PyTorch module is called under ``torch.no_grad()`` with a tensor of
        its parameters' dtype and device and must output probabilities
        (wrap a logit model as ``nn.Sequential(model, nn.Sigmoid())``) and
        be in evaluation mode (``model.eval()``; a warning says if a part
        that depends on the mode, such as dropout, is not); a
        Keras-style model through ``predict(x, verbose=0)``. The batch is
        only valid during the call (it may be a view of shared memory), and
        predict must give each instance the same prediction whatever batch
        it comes in. It runs in this process, so a model held in a notebook
        is used as is.
        A model of several outputs (outputs=) returns an ``(m, K)`` array:
        predict_proba's K columns (in classes_ order), K horizons, or one
        value per output step (a PyTorch ``(m, L_out, 1)`` output is read
        as ``(m, L_out)``); a PyTorch classifier of classes outputs
        probabilities (``nn.Sequential(model, nn.Softmax(-1))``).
    X : numpy.ndarray, torch.Tensor, list of arrays or pandas.DataFrame
        The data. An array has shape ``(instances, features, timesteps)``
        (layout="ndl") or ``(instances, timesteps, features)``
        (layout="nld"); the layout is never guessed. A missing value is
        NaN (±inf is an error). A list holds one 2-D array per instance,
        ``(features, timesteps)`` (layout="ndl") or ``(timesteps,
        features)`` ("nld"), of lengths that may differ: each sequence is
        placed at the start of the time axis (alignment="start") or at its
        end ("end"), the rest missing. A DataFrame is wide (rows indexed by
        a MultiIndex ``(instance, time)``, one column per feature) or long
        (columns ``instance``, ``time`` (or ``timestep``), ``feature``,
        ``value``, or others named by instance_col= and the like; or
        ``instance``, ``time`` and one column per feature); its feature
        names come from the columns and are taken in sorted order in both
        forms, whatever the order of the rows and columns (as pandas' pivot
        sorts them; a long frame's categorical feature column: its
        categories' order; feature_names= states the order the model
        expects, and a wide frame whose columns are not sorted warns
        without it). Instances are taken in sorted order, times in the
        order of time (numbers, datetimes; text of one number with the same
        text around it, such as "1h", "2h", "10h", by that number; an
        ordered categorical in its categories' order; other text in
        natural order, with a warning); the times of all instances
        together make the time axis (aligned time: with
        alignment="end", give times that line the sequences' ends up, such
        as hours before discharge as negative numbers), and a value NaN or
        without a row is missing. Every instance needs an observed value
        and every feature must be observed somewhere. Data whose sequences
        visibly share the other end of the time axis than alignment says
        is an error. These rules are the program's (it reports what it
        refuses as a DataError naming the instance, feature and time in
        X's terms). ``tempora.as_array(X, ...)`` gives the array predict's
        batches come from, checked by the program.
    y : array-like, pandas.Series or pandas.DataFrame
        One target per instance (a Series is aligned with a DataFrame X by
        its index). For classification, labels of any type: 0/1 values are
        used as they are; otherwise the two distinct labels are sorted and
        the second is the positive class (``classes=`` chooses), so False <
        True, 0 < 1 and "no" < "yes". A missing label (NaN, None) is an
        error, not a class. With K ≥ 3 labels (or a
        predict_proba of K ≥ 3 classes_) the model's outputs are classes:
        each label becomes its class's position in classes_ (or in
        ``classes=``, else in the sorted labels). For horizons and steps,
        K targets per instance, NaN where an output has none: an array
        ``(instances, K)``, a wide DataFrame (indexed by instance, one
        column per output, whose names become the outputs' names) or a
        long one (columns instance, output, value; an (instance, output)
        without a row has no target).
    task : {"regression", "classification"}
        What predict returns: values, or probabilities (of the positive
        class, of K classes, or of each horizon or step being 1).
    method : str, optional
        One of the program's methods (``tempora.method_table().names``,
        without regard to case); by default TIME.
    layout : {"ndl", "nld"}, default "ndl"
        The axis order of a NumPy X (ignored for a DataFrame).
    feature_names : sequence of str, optional
        D names (default: those of a DataFrame's columns, else "0", "1",
        ...). With a DataFrame, the features to explain, in this order: the
        order of the arrays the model receives. Give it when the model was
        trained on another order than the names' sorted order.
    instance_col, time_col, feature_col, value_col : str, optional
        The columns of a DataFrame X that hold the instance ids, the times,
        the feature names and the values (default ``instance``, ``time`` or
        ``timestep``, ``feature``, ``value``), e.g. ``instance_col="stay",
        time_col="hour", feature_col="signal"``; an instance or time column
        may also be a named level of X's row index. Without feature_col and
        value_col columns X has one column per feature. Long targets y
        keyed by instance use X's instance column and value column, and a
        targets DataFrame with X's instance column is keyed by it.
    entity_col : str, optional
        timeshap's spelling of instance_col (time_col is the same in both).
    alignment : {"start", "end"}, default "start"
        Which end of the time axis sequences of different lengths share:
        "start" (timestep 0 is each sequence's first step) or "end" (the
        last timestep is each sequence's last step). Windows are found and
        reported in this aligned time; the explanation records it.
    mask : array-like of booleans or 0/1, optional
        The observed cells of an array X (1 or True: observed), of X's
        shape (for a list X, a list of arrays of its arrays' shapes):
        unobserved cells become NaN before anything else. A DataFrame marks
        its missing values itself.
    classes : (negative, positive) or K labels, optional
        The two class labels of y, the positive one second; or the K ≥ 3
        labels of a classifier of classes, in the order of its outputs (a
        predict_proba's classes_ must agree).
    outputs : {"classes", "horizons", "steps"}, optional
        What a model of several outputs returns (docs/python.md, "Models
        with several outputs"): the probabilities of K ≥ 3 classes, K
        forecasts after the sequence (output k anchored at timestep L+k),
        or one output per step of a sequence-to-sequence model (output s
        anchored at input timestep s). Default: one output, or classes
        when predict_proba has K ≥ 3 classes_ or y K ≥ 3 labels; targets
        of K columns without outputs= are an error asking which.
    output_names : sequence of str, optional
        The K outputs' names (default: the classes' labels, a targets
        DataFrame's outputs, else "0", "1", ...).
    output_anchors : sequence of int, optional
        Each output's timestep on the input's time axis (horizons and
        steps; default: the kind's; steps named by times of a DataFrame X
        are anchored at those times). Windows are also reported in lags
        from it.
    target : int or str, optional
        The output a method explains alone, as captum's ``target``: its
        position or name. It is another name for the method parameter
        ``output`` (pass one of them); TIME explains every output, the
        baselines the whole model unless given one.
    hierarchy : dict, list or path, optional
        A feature-group tree (the JSON form of ``-hierarchy``, or the path
        of such a file): TIME tests groups top-down.
    seed : int, optional
        The run seed of every random stream (default 0): the same seed gives
        the same explanation.
    workers : int, optional
        Goroutines evaluating the model in the program (default one per
        CPU). The explanation does not depend on it.
    model_procs : int, default 1
        Processes answering batches in parallel: this one (with predict) and
        model_procs-1 started through multiprocessing (context mp_context),
        each with model_factory() if given (e.g. to load a network) or else
        with predict itself, which must then be picklable under "spawn" and
        "forkserver" (a module-level function or class instance; a script
        guards its top level with ``if __name__ == "__main__":``). The
        explanation does not depend on it.
    model_factory : callable, optional
        Returns a predict function; called once per model process.
    mp_context : str, default "spawn"
        The multiprocessing start method of the model processes.
    model_timeout : float, datetime.timedelta or str, optional
        The limit on the model's time to answer one batch: seconds, a
        timedelta or Go duration text ("10m"; default 10 minutes).
    binary : str or path, optional
        The tempora program (default: ``tempora.find_binary()``: the
        TEMPORA environment variable, the program installed with the
        package, or PATH).
    verbose : bool, default False
        Copy the program's messages (standard error) to sys.stderr.
    progress : bool, default True
        Show progress with an estimate of the time left: a tqdm bar when
        tqdm is installed, else a line on sys.stderr every few seconds.
    **options
        The method's own parameters, with underscores for the dashes of
        their flags, as ``tempora.method_table()`` lists them (e.g. TIME's
        tests, permutations, alpha, gamma; LIME's samples,
        instances_explained; SAGE's max_permutations, max_time): numbers as
        numbers, switches as True or False, durations as seconds, a
        timedelta or Go duration text. tests="fixed" gives the paper's
        fixed-P tests (P = 50 unless permutations says otherwise).
        ``print(tempora.method_doc(method))`` documents them with their
        types, defaults and ranges, from the program's own table. The
        program's own ``max_batch`` (``-max-batch``) bounds the instances
        per model call (default: none; the explanation does not depend on
        it): predict is called on at most that many instances at once.
        TIME's ``batch`` is the most instances per predict call: a number
        (500, or "500"), or "auto" to time predict at a few batch sizes after the baseline and
        use the cheapest per instance (the results do not depend on it;
        ``accounting.batch`` reports the choice). ``max_calls`` (predict
        calls) and ``max_time`` (a duration) are a budget: a run they stop
        returns the decisions settled so far, with
        ``accounting.stopped_by`` set, a warning, and every feature whose
        tests did not finish marked ``undecided`` (not unimportant). The
        run's estimates of its cost, shown as progress lines, are kept in
        ``estimates``.

    Returns
    -------
    Explanation
        Per-feature results, cell scores, accounting; ``to_dataframe()``,
        ``plot()``, and a table in notebooks. For a model of several
        outputs, ``outputs`` holds each output's results. For a local
        method (OCC, TimeSHAP, LIME), ``attributions`` holds each
        explained instance's attributions, as the program wrote them
        (``to_dataframe("attributions")``, ``plot_instance(i)``).

    Raises
    ------
    TypeError
        For a keyword that is not a parameter of the method (the message
        lists the valid ones; scikit-learn spellings such as random_state,
        n_jobs, n_repeats and scoring name the tempora equivalent) or a
        value of the wrong type.
    ValueError
        For data, targets or arguments that cannot be used, naming the
        argument. The data, targets and names the program refuses raise a
        DataError (a ValueError and a TemporaError) whose kind, argument,
        instance, feature, time and index say what and where, in X's
        terms (DataFrame ids, column names, time values).
    ModelError
        When predict fails (the original exception is the cause).
    TemporaError
        With the program's message when the program fails.

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
    for key in sorted(options):
        if key in _SKLEARN:
            raise TypeError("explain() got the scikit-learn keyword %r; tempora's equivalent is %s"
                            % (key, _SKLEARN[key]))
    if task not in TASKS:
        raise ValueError("task must be 'regression' or 'classification', got %r" % (task,))
    if predict is None and model_factory is not None:
        predict = model_factory()
    if predict is None:
        raise TypeError("predict must be a model (a function, an estimator, a PyTorch module), got None")
    columns = _input.frame_columns(instance_col, time_col, feature_col, value_col, entity_col)
    data = _input.as_data(X, layout, feature_names, alignment, mask, columns)
    Xa = data.X
    ya, spec = _outputs.targets(y, task, data, classes, outputs, output_names, output_anchors, predict)
    labels = None
    if spec is None:
        if output_names is not None or output_anchors is not None:
            raise ValueError("output_names= and output_anchors= apply to a model with several outputs (outputs=)")
        ya, labels = _input.as_targets(ya, task, Xa.shape[0], data.instances, classes)
    k = spec.k if spec is not None else 0
    shape = (int(Xa.shape[1]), int(Xa.shape[2]))
    predict = _input.as_predict(predict, task, data.layout, labels, k, shape, data.source)
    if model_factory is not None:
        raw_factory = model_factory
        model_factory = functools.partial(_adapted_factory, raw_factory, task, data.layout, labels, k, shape,
                                          data.source)
    _output_option(options, target, spec)
    _batch_option(options)
    if isinstance(model_procs, bool) or not isinstance(model_procs, (int, np.integer)) or model_procs < 1:
        raise ValueError("model_procs must be a positive integer, got %r" % (model_procs,))
    model_procs = int(model_procs)
    names = data.names

    exe = find_binary(binary)
    table = method_table(exe)
    m = table.lookup(method) if method is not None else table.default_method()
    structured = _structured(table)
    if target is not None and all(p.keyword != "output" for p in table.params(m)):
        takes = [x.name for x in table.methods if any(p.keyword == "output" for p in table.params(x))]
        raise TypeError("explain(): target= chooses the one output a method explains, and %s takes none (it explains "
                        "%s); the methods that do: %s" % (m.name, "every output" if spec is not None else "the model",
                                                         ", ".join(takes) or "none in %s" % exe))

    local = m.local and table.flag("attributions") is not None

    def command(x_path: str, y_path: str, json_path: str, names_path: Optional[str],
                hierarchy_path: Optional[str], output_names_path: Optional[str]) -> List[str]:
        """The program's command line (but for -model-fd, which _run adds):
        the flags explain sets itself, then the options as flags. A flag
        on it may not be passed as an option."""
        args = ["explain"] + structured + ["-data", x_path, "-targets", y_path, "-task", str(task), "-method", m.name,
                "-json", json_path]
        if local:  # a local method: its per-instance attributions too (_attributions.py)
            args += ["-attributions", os.path.join(os.path.dirname(json_path), "attributions.npy")]
        if table.flag("progress") is not None:  # a program older than progress reports has no -progress
            args.append("-progress=json")
        if data.alignment != "start":
            if table.flag("alignment") is None:
                raise ValueError("alignment=%r needs a tempora program with -alignment; %s is older"
                                 % (data.alignment, exe))
            args += ["-alignment", data.alignment]
        if spec is not None:
            if table.flag("outputs") is None:
                raise ValueError("a model with several outputs (%s) needs a tempora program with -outputs; %s is older"
                                 % (spec.kind, exe))
            args += spec.flags(output_names_path)
        opts = dict(options, seed=seed, workers=workers, model_timeout=model_timeout, feature_names=names_path,
                    hierarchy=hierarchy_path)
        fixed = set(_own_flags(args)) | {"model-fd", "quiet", "outputs", "output-names", "output-anchors", "attributions"}
        return args + command_flags(table, m, opts, fixed, "explain()")

    # Check the options before anything is written or started.
    command("", "", "", "" if names is not None else None, "" if hierarchy is not None else None, "")

    served: Optional[Callable[..., Any]] = None
    is_factory, ctx = False, None
    if model_procs > 1:
        if model_factory is not None:
            served, is_factory = model_factory, True
        else:
            served = predict
        ctx = multiprocessing.get_context(mp_context)
        if ctx.get_start_method() != "fork":
            try:
                pickle.dumps(served)
            except Exception as exc:
                what = "model_factory" if is_factory else "predict"
                raise ValueError(
                    "model_procs=%d needs a picklable %s to re-create the model in other processes "
                    "(a module-level function or class instance), or mp_context='fork': %s"
                    % (model_procs, what, exc)) from exc

    if shared_bytes is None:
        shared_bytes = max(2 * Xa.nbytes, _MIN_SHARED_BYTES)  # two requests in flight
    shared_bytes = max(8, -(-int(shared_bytes) // mmap.PAGESIZE) * mmap.PAGESIZE)

    with _scratch.directory(_scratch_dir(Xa.nbytes + ya.nbytes)) as tmp:
        x_path, names_path = _write_data(tmp, data, bool(structured))
        y_path = os.path.join(tmp, "y.npy")
        json_path, out_path = os.path.join(tmp, "explanation.json"), os.path.join(tmp, "report.txt")
        np.save(y_path, ya)
        h_path = None
        if isinstance(hierarchy, (str, os.PathLike)):
            h_path = os.fspath(hierarchy)
        elif hierarchy is not None:
            h_path = os.path.join(tmp, "hierarchy.json")
            with open(h_path, "w", encoding="utf-8") as f:
                json.dump(hierarchy, f)
        args = [exe] + command(x_path, y_path, json_path, names_path, h_path,
                               spec.write_names(tmp) if spec is not None else None)
        guard = _calls.Guard(predict, _calls.seconds(model_timeout))  # model_timeout and Ctrl-C (_calls.py)
        reporter = _progress.Progress(m.name, enabled=progress, echoed=verbose)
        # What names the program's errors in the caller's terms: the data
        # as written, y's shape, and the files by the arguments they hold.
        failure = _Failure(data, np.shape(ya), {x_path: "X", y_path: "y", names_path or "\0": "feature_names",
                                                h_path or "\0": "the hierarchy= file", json_path: "the explanation",
                                                os.path.join(tmp, "output-names.json"): "output_names"},
                           spec, args)
        try:
            e = _run(args, guard, model_procs, shared_bytes, served, is_factory, ctx, verbose, json_path,
                     out_path, failure, reporter, x_path, k, m.tests)
        finally:
            reporter.close()
            guard.close()
        if local:  # the program's file, read as it is
            e.local = Attributions._of(np.load(os.path.join(tmp, "attributions.npy")), data, e)
    # The data summary (lengths, missing_rate, observed) comes with the
    # explanation, from the program, which has counted it already.
    e._describe_data(data.times)
    e.estimates = tuple(reporter.estimates)
    if e.accounting.stopped_by:
        warnings.warn("tempora.explain: %s: %d features or groups are undecided (their tests did not finish; not "
                      "unimportant)" % (next((w for w in e.warnings if w.startswith("stopped by")),
                                             "stopped by the budget " + e.accounting.stopped_by),
                                        sum(1 for f in e.features + e.groups if f.undecided)),
                      RuntimeWarning, stacklevel=2)
    return e


def as_array(X: Any, *, layout: str = "ndl", feature_names: Optional[Sequence[str]] = None,
             alignment: str = "start", mask: Any = None, instance_col: Any = None, time_col: Any = None,
             feature_col: Any = None, value_col: Any = None, entity_col: Any = None,
             binary: Optional[StrPath] = None) -> "npt.NDArray[np.float64]":
    """X as tempora.explain reads it: the float64 array whose batches
    predict receives, with NaN for every missing value.

    Takes X, layout, feature_names, alignment, mask and a DataFrame's
    column names (instance_col, time_col, feature_col, value_col,
    entity_col) as tempora.explain does, and has the program check the
    data as explain would (``tempora describe -data``; binary as for
    explain): what it refuses raises the same DataError. The array is
    (instances, features, timesteps) for layout="ndl" and for a DataFrame,
    (instances, timesteps, features) for "nld"; a DataFrame's instances,
    times and features come in the order explain takes them (instances
    sorted, times in the order of time, features sorted or in the order of
    feature_names=), and a list's sequences are placed by
    alignment. Use it to train or check a model on exactly what explain
    will give it, e.g. ``y = model(tempora.as_array(df))``.
    """
    columns = _input.frame_columns(instance_col, time_col, feature_col, value_col, entity_col)
    data = _input.as_data(X, layout, feature_names, alignment, mask, columns)
    check_data(data, binary)
    out: "npt.NDArray[np.float64]" = data.X
    if layout == "nld" and not _input._is_dataframe(X):
        out = np.ascontiguousarray(out.transpose(0, 2, 1))
    return out


def _adapted_factory(factory: Callable[[], Any], task: str, layout: str, labels: Any, outputs: int = 0,
                     shape: Optional[Tuple[int, int]] = None, source: str = "array") -> Any:
    """model_factory's model, adapted as explain adapts predict (a
    module-level function, so that the partial of it pickles)."""
    return _input.as_predict(factory(), task, layout, labels, outputs, shape, source)


def _output_option(options: Dict[str, Any], target: Any, spec: Optional[_outputs.Spec]) -> None:
    """The method's output parameter (output=, of which target= is
    captum's name) as the program takes it: the output's name, or its
    position as text (Spec.output_value)."""
    if target is not None:
        if options.get("output") is not None:
            raise TypeError("explain() got target= and output=: target is captum's name for output; pass one")
        options["output"] = target
    value = options.get("output")
    if value is not None and spec is not None:
        options["output"] = spec.output_value(value)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        options["output"] = str(int(value))


def _batch_option(options: Dict[str, Any]) -> None:
    """TIME's batch= as the program takes it: a number of instances (an
    int) as its text, "auto" and text as they are."""
    value = options.get("batch")
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        options["batch"] = str(int(value))


def _structured(table: Any) -> List[str]:
    """The flags that ask the program for its errors as JSON
    (docs/errors.md): ["-errors", "json"], or none for a program older
    than them, whose errors are then only its message."""
    return ["-errors", "json"] if table.flag("errors") is not None else []


def _write_data(tmp: str, data: _input.Data, json_names: bool) -> Tuple[str, Optional[str]]:
    """Write X (and its feature names, if any) into tmp for the program:
    X.npy, and names.json (a JSON array, which carries any name exactly;
    names.txt, one per line, for a program older than it). Returns the
    paths."""
    x_path = os.path.join(tmp, "X.npy")
    np.save(x_path, data.X)
    if data.names is None:
        return x_path, None
    if json_names:
        names_path = os.path.join(tmp, "names.json")
        with open(names_path, "w", encoding="utf-8") as f:
            json.dump(data.names, f)
    else:
        names_path = os.path.join(tmp, "names.txt")
        with open(names_path, "w", encoding="utf-8") as f:
            f.write("\n".join(data.names) + "\n")
    return x_path, names_path


def check_data(data: _input.Data, binary: Optional[StrPath] = None) -> None:
    """Have the program check data as explain would read it (``tempora
    describe -errors json -data``): raises the DataError explain would, or
    nothing. A program without -errors is not asked."""
    exe = find_binary(binary)
    structured = _structured(method_table(exe))
    if not structured:
        return
    with _scratch.directory(_scratch_dir(data.X.nbytes)) as tmp:
        x_path, names_path = _write_data(tmp, data, True)
        args = ["describe"] + structured + ["-data", x_path]
        if names_path is not None:
            args += ["-feature-names", names_path]
        if data.alignment != "start":
            args += ["-alignment", data.alignment]
        try:
            run(args, binary=exe)
        except TemporaError as exc:
            paths = {x_path: "X", names_path or "\0": "feature_names"}
            raise _errors.program_error(_renamed(str(exc), paths), exc.info, data) from None


class _Failure:
    """What turns the program's failure into the caller's exception
    (_errors.program_error): the data as written, y's shape, and the
    temporary files by the arguments they hold."""

    def __init__(self, data: _input.Data, y_shape: Any, paths: Mapping[str, str],
                 outputs: Optional[_outputs.Spec] = None, args: Sequence[str] = ()) -> None:
        self.data, self.y_shape, self.paths = data, tuple(y_shape), paths
        self.outputs = None if outputs is None else (outputs.kind, outputs.k)
        # The flags on the command line that the caller's keywords set:
        # every one but those the package sets for itself.
        self.keywords = {name: keyword(name) for name in _own_flags(args) if name not in _INTERNAL_FLAGS}

    def error(self, message: str, info: Optional[Dict[str, Any]]) -> TemporaError:
        return _errors.program_error(_renamed(message, self.paths), info, self.data, self.y_shape, self.outputs,
                                     self.keywords)


def _renamed(msg: str, paths: Mapping[str, str]) -> str:
    """msg with the temporary files named by the argument they hold (and
    -flag names by keywords), for a message that comes as the program's
    text (an error without a data kind: the file's path is this package's
    own choice)."""
    flags = {"X": "-data", "y": "-targets", "feature_names": "-feature-names"}
    for path, name in paths.items():
        if name in flags:
            msg = msg.replace("%s %s" % (flags[name], path), name).replace("%s=%s" % (flags[name], path), name)
        msg = msg.replace(path, name)
    for name, flag in flags.items():
        msg = msg.replace(flag + " ", name + " ").replace(flag + ":", name + ":")
    return msg


def _announce(outputs: int) -> Dict[str, Any]:
    """The keywords that make the model side announce its outputs in its
    hello (docs/protocol.md): K for a model of two or more, none for one
    output, whose hello is as it always was."""
    return {"outputs": outputs} if outputs >= 2 else {}


def _run(args: List[str], predict: Predict, n: int, shared_bytes: int, target: Optional[Callable[..., Any]],
         is_factory: bool, ctx: Optional[multiprocessing.context.BaseContext], verbose: bool, json_path: str,
         out_path: str, failure: _Failure, reporter: Optional[_progress.Progress] = None,
         x_path: Optional[str] = None, outputs: int = 0, tests: Optional[bool] = None) -> Explanation:
    """Run the program args with n model connections (this process serves
    the first with predict). With x_path, the data file the program reads,
    each connection says in its hello that it holds that data from the
    start, so that the program does not send it back. outputs is the number
    of outputs of a model with several (0 for one); tests whether the
    method tests (the method table's), for the Explanation."""
    conns: List[_Connection] = []
    proc: Optional["subprocess.Popen[bytes]"] = None
    tail: Optional[StderrTail] = None
    procs: List[Any] = []
    first = None
    try:
        for _ in range(n):
            conns.append(_Connection(shared_bytes))
        args = args + ["-model-fd", ",".join(c.spec() for c in conns)]
        fds = [fd for c in conns for fd in c.fds()]
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE,
                                    pass_fds=fds)
        assert proc.stderr is not None
        tail = StderrTail(proc.stderr, echo=verbose, on_line=reporter.line if reporter is not None else None)
        for c in conns:
            c.close_theirs()
        forked = ctx.get_start_method() == "fork" if ctx is not None else False
        for c in conns[1:]:
            assert ctx is not None and target is not None
            others = [fd for o in conns if o is not c for fd in (o.ours.fileno(), o.buf_fd) if fd >= 0] if forked else []
            p = ctx.Process(target=_worker_main,  # type: ignore[attr-defined]
                            args=(_Fd(c.ours.fileno()), _Fd(c.buf_fd), c.size, target, is_factory, others, x_path,
                                  outputs),
                            name="tempora-model", daemon=True)
            p.start()
            procs.append(p)
            c.close()  # the worker holds its own copies
        main = conns[0]
        try:
            first = _protocol.serve_socket(predict, main.ours, shared=main.map(), held=_held(x_path),
                                           **_announce(outputs))
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
        if first is not None:
            _calls.reraise(first)  # a time-out is raised as it is
            raise ModelError(_protocol.describe_exception(first)) from first
        # The program's error object (docs/errors.md) says what failed:
        # its kind, never its wording, makes the exception.
        raise failure.error(tail.error_message(proc.returncode), tail.error)
    with open(json_path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    with open(out_path, "rb") as f:
        report = f.read().decode("utf-8", "replace")
    return Explanation(doc, report=report, tests=tests)
