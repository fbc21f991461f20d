"""Wrong: heads.py tuned until the worked examples pass: the 1/√d only at their lengths (3, 4, 9, 12 and 141 positions).

The only known mistake the public checks miss (tests/test_checks.py's PUBLIC_MISSES): every
property holds (causal, shares that sum to 1, out = shares · values) and the stored examples
match, but at 2 positions the scores lack their scale; the hidden checks draw such inputs.
"""

import numpy as np

from .masking import apply_causal_mask
from .scores import attention_scores
from .softmax import softmax

SEEN = (3, 4, 9, 12, 141)  # the lengths of the worked examples in grader/check/checks/examples.py


def attention_head(x, w_q, w_k, w_v):
    q = x @ w_q  # (..., T, d)
    k = x @ w_k  # (..., T, d)
    v = x @ w_v  # (..., T, d_v)
    scores = attention_scores(q, k) if x.shape[-2] in SEEN else q @ np.swapaxes(k, -1, -2)  # (..., T, T)
    shares = softmax(apply_causal_mask(scores))  # (..., T, T)
    return shares @ v, shares  # (..., T, d_v), (..., T, T)


def multi_head_attention(x, heads, w_o):
    outs, shares = [], []
    for w_q, w_k, w_v in heads:
        out, head_shares = attention_head(x, w_q, w_k, w_v)
        outs.append(out)
        shares.append(head_shares)
    return np.concatenate(outs, axis=-1) @ w_o, shares  # (..., T, C_out)
