"""Wrong: softmax.py with exp before the shift; the right values, but overflow and NaN warnings on the way."""

import numpy as np


def softmax(x):
    e = np.exp(x)  # (..., S), overflows to inf past 709 and underflows to 0 below -745
    shares = e / np.sum(e, axis=-1, keepdims=True)  # inf / inf and 0 / 0 give NaN
    top = np.max(x, axis=-1, keepdims=True)  # (..., 1)
    shifted = np.exp(x - top)
    fixed = shifted / np.sum(shifted, axis=-1, keepdims=True)
    return np.where(np.abs(top) < 700, shares, fixed)  # rows whose exp stayed in range keep the first result
