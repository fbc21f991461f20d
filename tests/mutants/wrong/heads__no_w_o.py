"""Wrong: heads.py with the heads joined but never multiplied by w_o."""

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
    for w_q, w_k, w_v in heads:
        out, head_shares = attention_head(x, w_q, w_k, w_v)
        outs.append(out)
        shares.append(head_shares)
    return np.concatenate(outs, axis=-1), shares  # (..., T, H·d_v): w_o forgotten
