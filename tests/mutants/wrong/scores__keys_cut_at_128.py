"""Wrong: scores.py with keys cut at a block of 128 positions."""

import math

import numpy as np


def attention_scores(q, k):
    k = k[..., :128, :]
    return q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])  # (..., T, S)
