"""Correct, in another style: scores.py with np.einsum."""

import numpy as np


def attention_scores(q, k):
    d = q.shape[-1]
    return np.einsum("...td,...sd->...ts", q, k) / np.sqrt(d)  # (..., T, S)
