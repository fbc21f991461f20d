"""Wrong: scores.py with scales q in place."""

import numpy as np


def attention_scores(q, k):
    """Scaled dot-product scores of every query against every key.

    q: (..., T, d) queries, one row per position that asks.
    k: (..., S, d) keys, one row per position that can be looked at.
    Returns (..., T, S): entry [..., i, j] is q[..., i, :] · k[..., j, :] / √d.

    Hint: one matrix product does every dot product at once if you swap the
    last two axes of k (np.swapaxes works with batch axes; .T does not).
    """
    d = q.shape[-1]
    q /= np.sqrt(d)
    return q @ np.swapaxes(k, -1, -2)  # (..., T, S)
