"""Wrong: masking.py with upper triangle kept."""

import numpy as np


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool))  # (T, T)


def apply_causal_mask(scores):
    T = scores.shape[-1]
    return np.where(causal_mask(T), scores, -np.inf)  # (..., T, T)
