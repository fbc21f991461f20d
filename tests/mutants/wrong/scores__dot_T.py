"""Wrong: scores.py with .T breaks the batch axes."""

import numpy as np


def attention_scores(q, k):
    d = q.shape[-1]
    return q @ k.T / np.sqrt(d)  # (..., T, S)
