"""Replaces isinstance and float for everyone at import, then returns a wrong answer."""

import builtins

import numpy as np

builtins.isinstance = lambda obj, cls: True
builtins.abs = lambda x: 0


def softmax(x):
    return np.zeros_like(x)
