"""Exercise 1 of 5: attention scores, how well each query matches each key.

Every position of a reply asks a question (its query, a vector of d numbers) and
offers a label (its key, d numbers too). The score of position i for position j
is the dot product of query i with key j: large when they point the same way.
Dividing by √d keeps the scores near size 1 whatever d is, so the softmax that
follows does not saturate.
"""

import numpy as np


def attention_scores(q, k):
    """Scaled dot-product scores of every query against every key.

    q: (..., T, d) queries, one row per position that asks.
    k: (..., S, d) keys, one row per position that can be looked at.
    Returns (..., T, S): entry [..., i, j] is q[..., i, :] · k[..., j, :] / √d.

    Hint: one matrix product does every dot product at once if you swap the
    last two axes of k (np.swapaxes works with batch axes; .T does not).
    """
    raise NotImplementedError
