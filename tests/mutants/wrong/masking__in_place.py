"""Wrong: masking.py with writes -inf into the caller's scores."""

import numpy as np


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def apply_causal_mask(scores):
    T = scores.shape[-1]
    scores[..., ~causal_mask(T)] = -np.inf
    return scores  # (..., T, T)
