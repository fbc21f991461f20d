"""Wrong: heads.py with its own mask made for a block of 128 positions."""

import numpy as np

from .masking import apply_causal_mask
from .scores import attention_scores
from .softmax import softmax


def attention_head(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (..., T, d), (..., T, d), (..., T, d_v)
    T = x.shape[-2]
    scores = np.where(np.tril(np.ones((128, 128), dtype=bool))[:T, :T], attention_scores(q, k), -np.inf)  # (..., T, T)
    shares = softmax(scores)  # (..., T, T)
    return shares @ v, shares  # (..., T, d_v), (..., T, T)


def multi_head_attention(x, heads, w_o):
    outs, shares = [], []
    for w_q, w_k, w_v in heads:
        out, head_shares = attention_head(x, w_q, w_k, w_v)
        outs.append(out)
        shares.append(head_shares)
    return np.concatenate(outs, axis=-1) @ w_o, shares  # (..., T, C_out)
