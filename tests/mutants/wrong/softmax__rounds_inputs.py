"""Wrong: softmax.py with the scores rounded to 3 decimals first: right on inputs of few digits only."""

import numpy as np


def softmax(x):
    x = np.round(x, 3)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))  # (..., S)
    return e / e.sum(axis=-1, keepdims=True)
