"""Wrong: scores.py with // (floor division) in place of /."""

import numpy as np


def attention_scores(q, k):
    d = q.shape[-1]
    return q @ np.swapaxes(k, -1, -2) // np.sqrt(d)  # (..., T, S)
