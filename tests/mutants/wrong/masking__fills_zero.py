"""Wrong: masking.py with masked entries set to 0."""

import numpy as np


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def apply_causal_mask(scores):
    T = scores.shape[-1]
    return np.where(causal_mask(T), scores, 0.0)  # (..., T, T)
