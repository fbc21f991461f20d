"""Asks for 8 TB at once."""

import numpy as np


def softmax(x):
    return np.ones((10**6, 10**6))
