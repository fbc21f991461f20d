"""Exercise 3 of 5: softmax, turning scores into shares that add up to 1.

Each position divides its attention among the positions it may look at. The
softmax makes the shares positive and makes each row add up to 1:
share_j = exp(x_j) / sum over k of exp(x_k). A masked score of -inf gets a share
of exactly 0. exp overflows past about 709, so subtract each row's largest
score first: the shares do not change, since the same factor cancels above and
below the line. After that shift no small number is needed below the line to
avoid dividing by 0: each row's sum is at least 1, its largest entry being exp(0).
"""

import numpy as np


def softmax(x):
    """Softmax along the last axis, stable for any finite scores.

    x: (..., S) scores; some entries may be -inf, but never a whole row.
    Returns (..., S): every entry >= 0, each row sums to 1, -inf gives 0.

    Hint: keepdims=True keeps the row's maximum and sum as (..., 1), ready to
    broadcast back against the row.
    """
    raise NotImplementedError
