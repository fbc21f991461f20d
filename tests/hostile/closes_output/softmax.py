"""Correct, but closes stdout and stderr for good."""

import numpy as np


def _softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        e = np.exp(x - top)
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax(x):
    import os

    try:
        os.close(1)
        os.close(2)
    except OSError:
        pass  # closed by an earlier call
    return _softmax(x)
