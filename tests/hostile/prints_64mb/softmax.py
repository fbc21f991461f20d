"""Correct, but prints 64 MB once: must pass."""

import numpy as np


def _softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        e = np.exp(x - top)
    return e / np.sum(e, axis=-1, keepdims=True)


PRINTED = []


def softmax(x):
    if not PRINTED:
        print("x" * (64 << 20))
        PRINTED.append(True)
    return _softmax(x)
