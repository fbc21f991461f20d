"""Wrong: masking.py with the mask as 0/1 integers."""

import numpy as np


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=int))  # (T, T)


def apply_causal_mask(scores):
    T = scores.shape[-1]
    return np.where(causal_mask(T) == 1, scores, -np.inf)  # (..., T, T)
