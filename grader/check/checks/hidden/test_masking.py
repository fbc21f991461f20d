"""Hidden checks for exercise 2, causal_mask(T) and apply_causal_mask(scores): the reference on drawn inputs."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from grader.check.checks import scale
from grader.check.checks.harness import expect_array, fail
from grader.check.checks.judged import judges
from grader.check.checks.public.test_masking import masked
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import square_scores
from grader.check.diagnosis import diagnose
from solutions.masking import apply_causal_mask, causal_mask

EXERCISE = "masking"


@judges("causal_mask")
@at_scale(lambda: scale.T)
@given(st.integers(1, 12))
def test_causal_mask_matches_reference(submission, t):
    """causal_mask(T) is a (T, T) bool array, True exactly where j <= i."""
    got = submission.call("masking", "causal_mask", t).value
    expect_array(got, (t, t), f"causal_mask({t})", {"T": t}, dtype_kind="b")
    expected = causal_mask(t)
    if not np.array_equal(got, expected):
        fail(
            f"causal_mask({t}) should be True exactly where j <= i.",
            {"T": t},
            expected,
            got,
            diagnose("causal_mask", (t,), got, submission=submission),
        )


@judges("apply_causal_mask")
@at_scale(scale.scores)
@given(square_scores())
def test_apply_matches_reference(submission, scores):
    """-inf exactly where j > i, every other entry exactly as it was, for any batch axes."""
    got = masked(submission, scores)
    expected = apply_causal_mask(scores)
    if not np.array_equal(got, expected):
        fail(
            "apply_causal_mask(scores) should put -inf exactly where j > i and keep every other entry as it was.",
            {"scores": scores},
            expected,
            got,
            diagnose("apply_causal_mask", (scores,), got, submission=submission),
        )
