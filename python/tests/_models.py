"""Models for the tests, at module level so that multiprocessing's spawn
start method can pickle them by reference."""

import time

import numpy as np


def additive(batch):
    """A regression model of features 1 (timesteps 4..9) and 3 (0..2)."""
    return 2.0 * batch[:, 1, 4:].mean(axis=1) - 1.5 * batch[:, 3, :3].mean(axis=1)


def logistic(batch):
    """A classifier of features 0 (last 3 timesteps) and 2 (whole sequence)."""
    score = 3.0 * batch[:, 0, -3:].mean(axis=1) + 2.0 * batch[:, 2, :].mean(axis=1)
    return 1.0 / (1.0 + np.exp(-score))


def make_additive():
    """A model factory: what a worker process calls to build its model."""
    return additive


def failing(batch):
    raise ArithmeticError("worker model failed on a batch of %d" % len(batch))


def make_failing():
    return failing


class Slow:
    """additive, taking at least `seconds` per call (for interrupts)."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __call__(self, batch):
        time.sleep(self.seconds)
        return additive(batch)


def data(m, d=6, l=10, seed=0):
    """Standard normal data of shape (m, d, l)."""
    return np.random.default_rng(seed).normal(size=(m, d, l))


def horizons3(batch):
    """A forecaster of three horizons: h+1 reads feature 0 over the last 3
    timesteps, h+2 feature 1 over 4..6, h+3 features 0 (last 3) and 2
    (0..2). Shape (m, 3)."""
    a = batch[:, 0, -3:].mean(axis=1)
    return np.stack([2 * a, 2 * batch[:, 1, 4:7].mean(axis=1), a + 2 * batch[:, 2, :3].mean(axis=1)], axis=1)
