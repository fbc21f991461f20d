"""Wrong: heads.py taking the heads with heads.pop(0): right values, the caller's list left empty."""

import numpy as np

from .masking import apply_causal_mask
from .scores import attention_scores
from .softmax import softmax


def attention_head(x, w_q, w_k, w_v):
    q = x @ w_q  # (..., T, d)
    k = x @ w_k  # (..., T, d)
    v = x @ w_v  # (..., T, d_v)
    shares = softmax(apply_causal_mask(attention_scores(q, k)))  # (..., T, T)
    return shares @ v, shares  # (..., T, d_v), (..., T, T)


def multi_head_attention(x, heads, w_o):
    outs, shares = [], []
    while heads:
        w_q, w_k, w_v = heads.pop(0)
        out, head_shares = attention_head(x, w_q, w_k, w_v)
        outs.append(out)
        shares.append(head_shares)
    return np.concatenate(outs, axis=-1) @ w_o, shares  # (..., T, C_out)
