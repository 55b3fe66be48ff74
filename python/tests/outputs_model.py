"""A model program of three outputs per instance for ``tempora explain
-model-cmd``: the Go test TestExplainOutputsPython (cli/modeloutputs_test.go)
explains it and compares with its Go twin (outputsModels there), whose
arithmetic this repeats operation for operation.

Usage: outputs_model.py horizons|classes [--hold X.npy]

With --hold, the model side holds the data file X.npy from the start (mapped
copy-on-write) and says so in its hello, so that tempora sends no resident
data; every resident data frame it receives is reported on standard error.
"""

import sys

import numpy as np

from tempora import _protocol


def horizons(b):
    h0 = b[:, 0, 2] + b[:, 0, 3] + b[:, 0, 4]
    h1 = b[:, 1, 6] - b[:, 1, 7]
    h2 = 2.0 * b[:, 2, 9] + b[:, 2, 10] + b[:, 0, 3]
    return np.stack([h0, h1, h2], axis=1)


def classes(b):
    a = b[:, 0, 2] + b[:, 0, 3]
    w0 = 1.0 + a * a
    w1 = 1.0 + b[:, 1, 6] * b[:, 1, 6]
    w2 = np.full(len(b), 1.5)
    s = w0 + w1 + w2
    return np.stack([w0 / s, w1 / s, w2 / s], axis=1)


def main(argv):
    predict = {"horizons": horizons, "classes": classes}[argv[0]]
    held = None
    if argv[1:2] == ["--hold"]:
        held = np.load(argv[2], mmap_mode="c")
    read = _protocol._Resident.read

    def reported(self, *args, **kwargs):
        print("outputs_model: resident data received", file=sys.stderr, flush=True)
        return read(self, *args, **kwargs)

    _protocol._Resident.read = reported
    out = _protocol.claim_stdout()

    def sendall(data):
        out.write(data)
        out.flush()

    _protocol.serve_stream(predict, sys.stdin.buffer.readinto, sendall, held=held, outputs=3)


if __name__ == "__main__":
    main(sys.argv[1:])
