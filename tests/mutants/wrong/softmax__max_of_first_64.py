"""Wrong: softmax.py with the maximum of each row's first 64 entries only: fine on short rows, overflowing on the comparison's."""

import numpy as np


def softmax(x):
    top = np.max(x[..., :64], axis=-1, keepdims=True)  # (..., 1)
    with np.errstate(over="ignore"):
        e = np.exp(x - top)  # (..., S)
    return e / e.sum(axis=-1, keepdims=True)
