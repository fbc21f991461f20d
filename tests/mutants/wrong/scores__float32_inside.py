"""Wrong: scores.py computing q·k in float32, then dividing by a float64 √d: a float64 result with float32's digits."""

import numpy as np


def attention_scores(q, k):
    q32, k32 = q.astype(np.float32), k.astype(np.float32)
    return q32 @ np.swapaxes(k32, -1, -2) / np.sqrt(q.shape[-1])  # (..., T, S)
