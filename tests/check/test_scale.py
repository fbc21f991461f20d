"""The checks' copy of `grader compare`'s sizes (scale.py, and the worked examples' comparison sizes) is compare's own."""

import numpy as np

from grader.check.checks import scale
from grader.check.checks.examples import SIZES
from grader.compare import command, corpus, job, models


def longest_reply() -> int:
    """The positions of the longest reply the comparison trains or samples on: a batch's T."""
    replies = corpus.load_replies("train") + corpus.load_replies("valid")
    return models.batch(replies)[0].shape[1]


def test_the_positions_batch_and_steps_are_the_comparisons():
    assert scale.T == longest_reply()
    assert scale.BATCH == job.BATCH
    assert scale.STEPS == max(command.STEPS.values())
    assert scale.VOCAB == models.VOCAB


def test_the_head_s_widths_are_the_attention_model_s():
    assert (scale.C, scale.D, scale.D_V) == (
        models.HEAD_IN,
        models.HEAD_IN,
        models.CONTEXT * models.EMBED,
    )


def test_the_parameters_are_the_attention_model_s():
    model = models.AttentionMLP(
        np.random.default_rng(0), head=None, head_backward=None, softmax=None
    )
    assert {name: value.shape for name, value in model.params.items()} == scale.PARAMS


def test_the_gradients_order_dtype_and_lr_are_the_comparison_s():
    """sgd_step as the comparison calls it: the model's own loss_and_grads gives its gradients in scale.GRADS' order, float32."""

    def head(
        x, w_q, w_k, w_v
    ):  # outputs of the head's shapes: the gradients' order does not depend on their values
        return np.zeros(x.shape[:-1] + w_v.shape[-1:], x.dtype), np.zeros(
            x.shape[:-1] + x.shape[-2:-1], x.dtype
        )

    def head_backward(d_out, x, w_q, w_k, w_v):
        return np.zeros_like(x), np.zeros_like(w_q), np.zeros_like(w_k), np.zeros_like(w_v)

    def softmax(logits):
        return np.full_like(logits, 1.0 / logits.shape[-1])

    model = models.AttentionMLP(np.random.default_rng(0), head, head_backward, softmax)
    _, grads = model.loss_and_grads(*models.batch([np.array([0, 3, 1, 4, 0]), np.array([0, 2, 0])]))
    assert tuple(grads) == scale.GRADS and tuple(model.params) == tuple(scale.PARAMS)
    assert (
        {g.dtype for g in grads.values()}
        == {p.dtype for p in model.params.values()}
        == {np.dtype(scale.DTYPE)}
    )
    assert scale.LR == job.LR
    params, grads = scale.as_compared()
    assert list(params) == list(model.params) and list(grads) == list(scale.GRADS)
    assert all(
        params[name].shape == grads[name].shape == model.params[name].shape for name in params
    )


def test_the_worked_examples_at_the_comparison_s_sizes_are_its_head():
    compared = {size.name: size for size in SIZES if size.name.startswith("comparison")}
    for size in compared.values():
        assert (size.c, size.d, size.d_v, size.dtype) == (
            models.HEAD_IN,
            models.HEAD_IN,
            models.CONTEXT * models.EMBED,
            models.DTYPE,
        )
    assert compared["comparison batch"].batch == (job.BATCH,)
    assert compared["comparison reply"].t == longest_reply()
