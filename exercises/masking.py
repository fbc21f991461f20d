"""Exercise 2 of 5: the causal mask, so no position can peek at the answer.

In training the model sees a whole reply at once and must guess, at every
position i, the character at i + 1. If position i could look at position i + 1
it would copy the answer instead of learning to predict it, and then fail when
it writes a reply of its own. So position i may look at positions j <= i only:
scores above the diagonal become -inf, which the softmax turns into exactly 0.
"""

import numpy as np


def causal_mask(T):
    """Which positions may look at which: True where j <= i.

    T: the number of positions (an int >= 1).
    Returns a (T, T) bool array, True on and below the diagonal.

    Hint: numpy has a function that keeps the lower triangle of a matrix.
    """
    raise NotImplementedError


def apply_causal_mask(scores):
    """A copy of the scores with -inf wherever a position would look ahead.

    scores: (..., T, T) attention scores.
    Returns (..., T, T): -inf where j > i, every other entry unchanged.
    The input is left as it was.

    Hint: np.where(condition, a, b) picks from a where True and b elsewhere,
    and broadcasts a (T, T) condition over the batch axes.
    """
    raise NotImplementedError
