"""Wrong: heads.py computing the scores itself, divided by √C (the width of x) instead of √d: right only where C = d."""

import numpy as np

from .masking import apply_causal_mask
from .softmax import softmax


def attention_head(x, w_q, w_k, w_v):
    q = x @ w_q  # (..., T, d)
    k = x @ w_k  # (..., T, d)
    v = x @ w_v  # (..., T, d_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(x.shape[-1])  # √C, not √d
    shares = softmax(apply_causal_mask(scores))  # (..., T, T)
    return shares @ v, shares


def multi_head_attention(x, heads, w_o):
    outs, shares = [], []
    for w_q, w_k, w_v in heads:
        out, head_shares = attention_head(x, w_q, w_k, w_v)
        outs.append(out)
        shares.append(head_shares)
    return np.concatenate(outs, axis=-1) @ w_o, shares
