"""A wrong answer, with a conftest.py next to it that tries to pass every check."""

import numpy as np


def softmax(x):
    return np.zeros_like(x)
