"""A wrong answer, with a numpy.py next to it whose allclose always agrees."""

import numpy as np


def softmax(x):
    return np.zeros_like(x)
