"""Wrong: softmax.py with normalised over the whole array."""

import numpy as np


def softmax(x):
    """Softmax along the last axis, stable for any finite scores.

    x: (..., S) scores; some entries may be -inf, but never a whole row.
    Returns (..., S): every entry >= 0, each row sums to 1, -inf gives 0.

    Hint: keepdims=True keeps the row's maximum and sum as (..., 1), ready to
    broadcast back against the row.
    """
    top = np.max(x, axis=-1, keepdims=True)  # (..., 1)
    with np.errstate(over="ignore"):  # a gap beyond the float range gives exp(-inf) = 0
        e = np.exp(x - top)  # (..., S), largest entry of each row is 1
    return e / np.sum(e)
