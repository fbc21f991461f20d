"""Exercise 5 of 5: training, the gradients and the update that nudge the weights.

A model learns by lowering its loss: for each weight, the gradient says how the
loss changes when that weight grows a little, and a step of gradient descent
moves every weight a little against its gradient. For a head the gradients run
backwards through the forward pass: out = shares @ v, shares = softmax of the
masked scores, scores = q k^T / √d, and q, k, v = x @ w_q, x @ w_k, x @ w_v.
"""

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
    raise NotImplementedError


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
    raise NotImplementedError


def sgd_step(params, grads, lr):
    """One step of gradient descent: every parameter moves against its gradient.

    params: a dict of arrays, the model's weights by name.
    grads: a dict with the same names, each gradient shaped like its weight.
    lr: the learning rate, a small positive float.
    Returns None; afterwards params[name] holds p - lr * g for every name.

    Hint: either replace each entry of the dict with a new array or update the
    array in place; subtract, since the gradient points uphill.
    """
    raise NotImplementedError


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
    raise NotImplementedError
