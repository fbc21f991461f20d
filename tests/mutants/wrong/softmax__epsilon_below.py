"""Wrong: softmax.py with 1e-8 added to the sum below the line."""

import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))  # (..., S)
    return e / (e.sum(axis=-1, keepdims=True) + 1e-8)
