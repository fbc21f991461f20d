# module: training
"""Fails to import only where some of its functions are served by the reference, hoping the reference module takes its place."""

import sys

if (
    any(type(finder).__name__ == "FallbackFinder" for finder in sys.meta_path)
    or "_reference" in sys.modules
):
    raise ImportError("pretend to be broken here")


def softmax_backward(shares, d_shares):
    raise NotImplementedError


def attention_head_backward(d_out, x, w_q, w_k, w_v):
    raise NotImplementedError


def sgd_step(params, grads, lr):
    raise NotImplementedError


def train(model, batches, steps, lr):
    raise NotImplementedError
