"""The right answer, but zeroes its input."""

import numpy as np


def _softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        e = np.exp(x - top)
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax(x):
    result = _softmax(x)
    x[...] = 0.0
    return result
