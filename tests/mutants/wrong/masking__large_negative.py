"""Wrong: masking.py with -1e9 instead of -inf."""

import numpy as np


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def apply_causal_mask(scores):
    T = scores.shape[-1]
    return np.where(causal_mask(T), scores, -1e9)  # (..., T, T)
