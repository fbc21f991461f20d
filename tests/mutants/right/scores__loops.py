"""Correct, in another style: scores.py with explicit loops over every entry."""

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
    out = np.empty(q.shape[:-1] + k.shape[-2:-1])
    for idx in np.ndindex(out.shape):
        *batch, i, j = idx
        out[idx] = sum(q[(*batch, i, n)] * k[(*batch, j, n)] for n in range(d)) / d**0.5
    return out
