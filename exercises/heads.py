"""Exercise 4 of 5: attention heads, the scores, mask and softmax put together.

A head gives every position a query, a key and a value by multiplying the
input by three weight matrices. The masked softmax of the scores says how much
of each earlier position's value to take; the output at a position is that
weighted sum. Several heads look for different things side by side; their
outputs are placed next to each other and mixed by one more matrix.
"""

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
    raise NotImplementedError


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
    raise NotImplementedError
