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
    assert (scale.C, scale.D, scale.D_V) == (models.HEAD_IN, models.HEAD_IN, models.CONTEXT * models.EMBED)


def test_the_parameters_are_the_attention_model_s():
    model = models.AttentionMLP(np.random.default_rng(0), head=None, head_backward=None, softmax=None)
    assert {name: value.shape for name, value in model.params.items()} == scale.PARAMS


def test_the_worked_examples_at_the_comparison_s_sizes_are_its_head():
    compared = {size.name: size for size in SIZES if size.name.startswith("comparison")}
    for size in compared.values():
        assert (size.c, size.d, size.d_v, size.dtype) == (models.HEAD_IN, models.HEAD_IN, models.CONTEXT * models.EMBED, models.DTYPE)
    assert compared["comparison batch"].batch == (job.BATCH,)
    assert compared["comparison reply"].t == longest_reply()
