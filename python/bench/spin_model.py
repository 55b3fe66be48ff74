#!/usr/bin/env python3
"""A model of known cost for benchmarks: it predicts the mean of feature 0
over the last 5 timesteps and busy-waits so that a batch of m instances
takes m/1000 * --per-1000 milliseconds (a stand-in for a network whose cost
grows with the batch).

    spin_model.py --per-1000 MS                 serve on standard input/output
                                                (tempora explain -model-cmd)
    spin_model.py --per-1000 MS --fd S --buf B  serve the connected socket S with
                                                the shared buffer B (tempora
                                                explain -model-fd S:B)

Importable: spin_model.SpinModel(ms) is the picklable predict function.
"""

import argparse
import mmap
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import tempora  # noqa: E402  (the source tree's package when not installed)
from tempora import _protocol  # noqa: E402


class SpinModel:
    def __init__(self, per_1000_ms):
        self.per_instance = per_1000_ms / 1000.0 / 1000.0

    def __call__(self, batch):
        end = time.perf_counter() + self.per_instance * len(batch)
        out = batch[:, 0, -5:].mean(axis=1)
        while time.perf_counter() < end:
            pass
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-1000", type=float, required=True, help="milliseconds per 1000 instances")
    ap.add_argument("--fd", type=int, help="connected socket to serve")
    ap.add_argument("--buf", type=int, help="shared buffer of the socket")
    args = ap.parse_args()
    predict = SpinModel(args.per_1000)
    if args.fd is None:
        tempora.serve(predict)
        return
    conn = socket.socket(fileno=args.fd)
    shared = None
    if args.buf is not None:
        shared = mmap.mmap(args.buf, os.fstat(args.buf).st_size)
    _protocol.serve_socket(predict, conn, shared=shared)


if __name__ == "__main__":
    main()
