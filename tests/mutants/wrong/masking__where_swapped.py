"""Wrong: masking.py with np.where's two choices swapped: the seen entries hidden, the hidden ones kept."""

import numpy as np


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def apply_causal_mask(scores):
    T = scores.shape[-1]
    return np.where(causal_mask(T), -np.inf, scores)  # (..., T, T)
