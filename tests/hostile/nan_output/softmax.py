"""NaN everywhere: NaN compares unequal to everything, so comparisons must not treat it as close."""

import numpy as np


def softmax(x):
    return np.full(np.shape(x), np.nan)
