"""Wrong: softmax.py turning -inf into -1e9 before the shift: wrong where every finite score of a row is below -1e9."""

import numpy as np


def softmax(x):
    x = np.where(np.isneginf(x), -1e9, x)
    top = np.max(x, axis=-1, keepdims=True)  # (..., 1)
    with np.errstate(over="ignore"):  # a gap beyond the float range gives exp(-inf) = 0
        e = np.exp(x - top)  # (..., S), largest entry of each row is 1
    return e / np.sum(e, axis=-1, keepdims=True)
