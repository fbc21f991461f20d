"""Correct, in another style: softmax.py with a loop over the rows with math.exp."""

import numpy as np


def softmax(x):
    """Softmax along the last axis, stable for any finite scores.

    x: (..., S) scores; some entries may be -inf, but never a whole row.
    Returns (..., S): every entry >= 0, each row sums to 1, -inf gives 0.

    Hint: keepdims=True keeps the row's maximum and sum as (..., 1), ready to
    broadcast back against the row.
    """
    import math

    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        top = max(row)
        e = [0.0 if v == -math.inf else math.exp(v - top) for v in row]
        total = sum(e)
        out[idx] = [v / total for v in e]
    return out
