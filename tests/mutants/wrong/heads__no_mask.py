"""Wrong: heads.py with no causal mask."""

import numpy as np

from .masking import apply_causal_mask
from .scores import attention_scores
from .softmax import softmax


def attention_head(x, w_q, w_k, w_v):
    """One causal self-attention head.

    x: (..., T, C) the input, one row of C numbers per position.
    w_q, w_k: (C, d) query and key weights. w_v: (C, d_v) value weights.
    Returns (out, shares):
      out (..., T, d_v): at each position, the shares times the values;
      shares (..., T, T): the masked softmax of the scores (rows sum to 1,
      zero above the diagonal).

    Hint: queries, keys and values are x @ w; then use your attention_scores,
    apply_causal_mask and softmax, in that order.
    """
    q = x @ w_q  # (..., T, d)
    k = x @ w_k  # (..., T, d)
    v = x @ w_v  # (..., T, d_v)
    shares = softmax(attention_scores(q, k))  # (..., T, T)
    return shares @ v, shares  # (..., T, d_v), (..., T, T)


def multi_head_attention(x, heads, w_o):
    """Several heads side by side, mixed by an output matrix.

    x: (..., T, C) the input.
    heads: a sequence of H tuples (w_q, w_k, w_v), each as in attention_head,
      every w_v with the same d_v.
    w_o: (H * d_v, C_out) the output weights.
    Returns (out, shares): out (..., T, C_out) is the head outputs joined along
    the last axis, in the given order, times w_o; shares is the list of each
    head's (..., T, T) shares, in the same order.

    Hint: np.concatenate(..., axis=-1) joins the outputs along the last axis.
    """
    outs, shares = [], []
    for w_q, w_k, w_v in heads:
        out, head_shares = attention_head(x, w_q, w_k, w_v)
        outs.append(out)
        shares.append(head_shares)
    return np.concatenate(outs, axis=-1) @ w_o, shares  # (..., T, C_out)
