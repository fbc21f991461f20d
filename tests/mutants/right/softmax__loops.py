"""Correct, in another style: softmax.py with a loop over the rows with math.exp."""

import numpy as np


def softmax(x):
    import math

    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        top = max(row)
        e = [0.0 if v == -math.inf else math.exp(v - top) for v in row]
        total = sum(e)
        out[idx] = [v / total for v in e]
    return out
