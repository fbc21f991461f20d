"""What `grader compare` hands the student's code, made by its own model code, so the checks hand the same.

The comparison trains grader.compare.models' attention model: its train gets the model, whose
parameters are a float32 dict in the model's order, and whose loss_and_grads gives a float32 dict
of gradients in another order (the layers' backward order). Code that pairs the two dicts by
position, or keeps float64 where the model holds float32, passes dicts built alike and breaks there.
"""

import functools

import numpy as np

from grader.compare import models

LR = 0.02  # the learning rate the comparison hands to train (grader.compare.job.LR)
REPLIES = [np.array([0, 3, 1, 4, 1, 5, 0]), np.array([0, 2, 7, 0])]  # two short replies as tokens, start and end included


def _head(x, w_q, w_k, w_v):
    """A stand-in for the head in the model: outputs of the head's shapes and dtype (the gradients' order does not depend on them)."""
    return np.zeros(x.shape[:-1] + w_v.shape[-1:], x.dtype), np.zeros(x.shape[:-1] + x.shape[-2:-1], x.dtype)


def _head_backward(d_out, x, w_q, w_k, w_v):
    """A stand-in for the head's backward pass: gradients of the right shapes, none zero."""
    return 0.1 * x, 0.1 * w_q, -0.1 * w_k, 0.1 * w_v


def _uniform(logits):
    """A stand-in for the softmax of the output layer."""
    return np.full_like(logits, 1.0 / logits.shape[-1])


@functools.cache
def _made() -> tuple[dict, dict]:
    model = models.AttentionMLP(np.random.default_rng(0), _head, _head_backward, _uniform)
    _, grads = model.loss_and_grads(*models.batch(REPLIES))
    for array in [*model.params.values(), *grads.values()]:
        array.flags.writeable = False
    return model.params, grads


def params_and_grads() -> tuple[dict, dict]:
    """The attention model's parameters and one step's gradients, as its code makes them: float32, each dict in the model's order."""
    params, grads = _made()
    return {name: p.copy() for name, p in params.items()}, {name: g.copy() for name, g in grads.items()}
