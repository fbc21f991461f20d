"""Correct, but slow: must pass."""

import numpy as np


def _softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        e = np.exp(x - top)
    return e / np.sum(e, axis=-1, keepdims=True)


CALLS = []


def softmax(x):
    """Correct, but the first call takes 1 s and every later one 10 ms."""
    import time

    time.sleep(1.0 if not CALLS else 0.01)
    CALLS.append(1)
    return _softmax(x)
