"""Wrong: masking.py with T from the first axis, breaking batch axes."""

import numpy as np


def causal_mask(T):
    """Which positions may look at which: True where j <= i.

    T: the number of positions (an int >= 1).
    Returns a (T, T) bool array, True on and below the diagonal.

    Hint: numpy has a function that keeps the lower triangle of a matrix.
    """
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def apply_causal_mask(scores):
    """A copy of the scores with -inf wherever a position would look ahead.

    scores: (..., T, T) attention scores.
    Returns (..., T, T): -inf where j > i, every other entry unchanged.
    The input is left as it was.

    Hint: np.where(condition, a, b) picks from a where True and b elsewhere,
    and broadcasts a (T, T) condition over the batch axes.
    """
    T = scores.shape[0]
    return np.where(causal_mask(T), scores, -np.inf)  # (..., T, T)
