"""Wrong: softmax.py with float32 arithmetic on float64 input."""

import numpy as np


def softmax(x):
    x = x.astype(np.float32)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))  # (..., S)
    return e / e.sum(axis=-1, keepdims=True)
