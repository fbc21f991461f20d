"""Wrong: masking.py with T from the first axis, breaking batch axes."""

import numpy as np


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def apply_causal_mask(scores):
    T = scores.shape[0]
    return np.where(causal_mask(T), scores, -np.inf)  # (..., T, T)
