"""Exercise 5 of 5: training, the gradients and the update that nudge the weights.

A model learns by lowering its loss: for each weight, the gradient says how the
loss changes when that weight grows a little, and a step of gradient descent
moves every weight a little against its gradient. For a head the gradients run
backwards through the forward pass: out = shares @ v, shares = softmax of the
masked scores, scores = q k^T / √d, and q, k, v = x @ w_q, x @ w_k, x @ w_v.
"""

import math

import numpy as np

from .masking import apply_causal_mask
from .scores import attention_scores
from .softmax import softmax


def softmax_backward(shares, d_shares):
    """The gradient with respect to x, for shares = softmax(x) along the last axis.

    shares: (..., S) the softmax's output.
    d_shares: (..., S) the loss's gradient with respect to the shares.
    Returns (..., S): the loss's gradient with respect to x.

    Hint: d_x_j = s_j * (d_s_j - sum over k of d_s_k * s_k); the sum is one
    number per row (keepdims=True).
    """
    dot = np.sum(d_shares * shares, axis=-1, keepdims=True)  # (..., 1)
    return shares * (d_shares - dot)  # (..., S)


def attention_head_backward(d_out, x, w_q, w_k, w_v):
    """The gradients of sum(d_out * out), for out = attention_head(x, w_q, w_k, w_v)[0].

    d_out: (..., T, d_v) the loss's gradient with respect to the head's output.
    x, w_q, w_k, w_v: as in attention_head.
    Returns (d_x, d_w_q, d_w_k, d_w_v): d_x (..., T, C) like x, and each weight
    gradient shaped like its weight, summed over the batch axes.

    Hint: redo the forward pass, keeping q, k, v and the shares; then go back
    one step at a time: d_v = shares^T d_out, d_shares = d_out v^T, the scores
    through your softmax_backward (masked entries get 0), then q and k (do not
    forget the 1/√d), then x and the weights. To sum over batch axes, reshape
    to (-1, C) before the last matrix product.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (..., T, d), (..., T, d), (..., T, d_v)
    shares = softmax(apply_causal_mask(attention_scores(q, k)))  # (..., T, T)
    d_v = np.swapaxes(shares, -1, -2) @ d_out  # (..., T, d_v)
    d_shares = d_out @ np.swapaxes(v, -1, -2)  # (..., T, T)
    d_scores = softmax_backward(shares, d_shares) / math.sqrt(q.shape[-1])  # (..., T, T)
    d_q = d_scores @ k  # (..., T, d)
    d_k = np.swapaxes(d_scores, -1, -2) @ q  # (..., T, d)
    d_x = d_q @ w_q.T + d_k @ w_k.T + d_v @ w_v.T  # (..., T, C)
    rows = x.reshape(-1, x.shape[-1])  # (N, C), every position of every batch
    d_w_q = rows.T @ d_q.reshape(-1, d_q.shape[-1])  # (C, d)
    d_w_k = rows.T @ d_k.reshape(-1, d_k.shape[-1])  # (C, d)
    d_w_v = rows.T @ d_v.reshape(-1, d_v.shape[-1])  # (C, d_v)
    return d_x, d_w_q, d_w_k, d_w_v


def sgd_step(params, grads, lr):
    """One step of gradient descent: every parameter moves against its gradient.

    params: a dict of arrays, the model's weights by name.
    grads: a dict with the same names, each gradient shaped like its weight.
    lr: the learning rate, a small positive float.
    Returns None; afterwards params[name] holds p - lr * g for every name.

    Hint: either replace each entry of the dict with a new array or update the
    array in place; subtract, since the gradient points uphill.
    """
    for name in params:
        params[name] = params[name] - lr * grads[name]


def train(model, batches, steps, lr):
    """The training loop: measure, compute gradients, step; again and again.

    model: has .params (a dict of arrays) and .loss_and_grads(x, y), which
      returns (loss, grads) with grads a dict shaped like .params.
    batches: an iterator of (x, y) pairs; take the next one for every step.
    steps: how many updates to make. lr: the learning rate.
    Returns the list of `steps` losses, each a Python float, in order.

    Hint: next(batches) gives the next pair; float(loss) turns a numpy number
    into a Python float.
    """
    losses = []
    for _ in range(steps):
        x, y = next(batches)
        loss, grads = model.loss_and_grads(x, y)
        sgd_step(model.params, grads, lr)
        losses.append(float(loss))
    return losses
