"""Public checks for exercise 2, causal_mask(T) and apply_causal_mask(scores): the definition, properties, worked examples."""

import copy

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from grader.check.checks import scale
from grader.check.checks.examples import examples, expect_example
from grader.check.checks.harness import expect_array, fail
from grader.check.checks.judged import judges
from grader.check.checks.profiles import FEW
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import square_scores
from grader.check.checks.unchanged import expect_unchanged

EXERCISE = "masking"


def masked(submission, scores):
    """The student's masked scores, checked to be a float array shaped like the scores."""
    got = submission.call("masking", "apply_causal_mask", scores).value
    expect_array(got, scores.shape, "apply_causal_mask(scores)", {"scores": scores})
    return got


def may_look(t: int) -> np.ndarray:
    """(T, T): True where position i (the row) may look at position j (the column), j <= i: the definition, entry by entry."""
    return np.array([[j <= i for j in range(t)] for i in range(t)], dtype=bool)


@judges("causal_mask")
@at_scale(lambda: scale.T)
@given(st.integers(1, 12))
def test_causal_mask_is_the_lower_triangle(submission, t):
    """causal_mask(T) is a (T, T) bool array, True exactly where j <= i."""
    got = submission.call("masking", "causal_mask", t).value
    expect_array(got, (t, t), f"causal_mask({t})", {"T": t}, dtype_kind="b")
    if not np.array_equal(got, may_look(t)):
        wrong = [(int(i), int(j)) for i, j in np.argwhere(got != may_look(t))[:3]]
        fail(
            f"causal_mask({t}) should be True exactly where j <= i (row i, column j); it is wrong at (i, j) = {wrong}.",
            {"T": t},
            got=got,
        )


@judges("apply_causal_mask")
@at_scale(scale.scores)
@given(square_scores())
def test_each_position_sees_itself_and_the_past(submission, scores):
    """Row i keeps its first i + 1 entries finite and hides the rest with -inf."""
    got = masked(submission, scores)
    t = scores.shape[-1]
    for i in range(t):
        if not (
            np.isfinite(got[..., i, : i + 1]).all() and np.isneginf(got[..., i, i + 1 :]).all()
        ):
            fail(
                f"Position {i} should see positions 0..{i} (finite) and not {i + 1}..{t - 1} (-inf).",
                {"scores": scores},
                got=got,
            )


@judges("apply_causal_mask")
@at_scale(scale.scores)
@given(square_scores(masked=True))
def test_seen_entries_unchanged(submission, scores):
    """Every entry with j <= i is exactly the score it was, -inf included (scores masked before)."""
    got = masked(submission, scores)
    seen = np.broadcast_to(may_look(scores.shape[-1]), scores.shape)
    if not np.array_equal(got[seen], scores[seen], equal_nan=True):
        rule = "apply_causal_mask should keep every entry with j <= i exactly as it was (only j > i becomes -inf)."
        fail(rule, {"scores": scores}, got=got)


@judges("apply_causal_mask", guard=True)
@at_scale(scale.scores)
@FEW
@given(square_scores())
def test_inputs_unchanged(submission, scores):
    """The scores are the same after the call."""
    before = copy.deepcopy(scores)
    outcome = submission.call("masking", "apply_causal_mask", scores)
    expect_unchanged({"scores": before}, outcome.args, "apply_causal_mask")


@judges("causal_mask")
def test_causal_mask_worked_examples(submission):
    """causal_mask on the worked examples' sizes, up to the comparison's 141 positions."""
    for example in examples("masking.causal_mask"):
        expect_example(
            submission.call("masking", "causal_mask", *example.args()).value, example, exact=True
        )


@judges("apply_causal_mask")
def test_apply_worked_examples(submission):
    """apply_causal_mask on the worked examples, exactly, up to the comparison's float32 scores."""
    for example in examples("masking.apply_causal_mask"):
        expect_example(
            submission.call("masking", "apply_causal_mask", *example.args()).value,
            example,
            exact=True,
        )
