"""Wrong: training.py with d_v from the shares untransposed (shares @ d_out instead of shares^T @ d_out)."""

import numpy as np

from .masking import apply_causal_mask
from .scores import attention_scores
from .softmax import softmax


def softmax_backward(shares, d_shares):
    dot = np.sum(d_shares * shares, axis=-1, keepdims=True)  # (..., 1)
    return shares * (d_shares - dot)  # (..., S)


def attention_head_backward(d_out, x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (..., T, d), (..., T, d), (..., T, d_v)
    shares = softmax(apply_causal_mask(attention_scores(q, k)))  # (..., T, T)
    d_v = shares @ d_out  # (..., T, d_v)
    d_shares = d_out @ np.swapaxes(v, -1, -2)  # (..., T, T)
    d_scores = softmax_backward(shares, d_shares) / np.sqrt(q.shape[-1])  # (..., T, T)
    d_q = d_scores @ k  # (..., T, d)
    d_k = np.swapaxes(d_scores, -1, -2) @ q  # (..., T, d)
    d_x = d_q @ w_q.T + d_k @ w_k.T + d_v @ w_v.T  # (..., T, C)
    rows = x.reshape(-1, x.shape[-1])  # (N, C), every position of every batch
    d_w_q = rows.T @ d_q.reshape(-1, d_q.shape[-1])  # (C, d)
    d_w_k = rows.T @ d_k.reshape(-1, d_k.shape[-1])  # (C, d)
    d_w_v = rows.T @ d_v.reshape(-1, d_v.shape[-1])  # (C, d_v)
    return d_x, d_w_q, d_w_k, d_w_v


def sgd_step(params, grads, lr):
    for name in params:
        params[name] = params[name] - lr * grads[name]


def train(model, batches, steps, lr):
    losses = []
    for _ in range(steps):
        x, y = next(batches)
        loss, grads = model.loss_and_grads(x, y)
        sgd_step(model.params, grads, lr)
        losses.append(float(loss))
    return losses
