"""Hidden checks for exercise 3, softmax(x) along the last axis: the reference on drawn inputs, and the known mistakes."""

import numpy as np
from hypothesis import given

from grader.check.checks import scale
from grader.check.checks.harness import expect_close, fail
from grader.check.checks.judged import judges
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import softmax_inputs
from grader.check.diagnosis import diagnose
from solutions.softmax import softmax

EXERCISE = "softmax"


@judges("softmax")
@at_scale(scale.masked)
@given(softmax_inputs())
def test_matches_reference(submission, x):
    """exp(x) / sum of exp(x) along the last axis, with -inf entries, for any batch axes."""
    got = submission.call("softmax", "softmax", x).value
    mistake = lambda: diagnose("softmax", (x,), got, submission=submission)  # noqa: E731
    if type(got) is np.ndarray and got.shape == x.shape and np.isnan(got).any():
        fail("softmax(x) contains NaN (not a number).", {"x": x}, softmax(x), got, mistake())
    expect_close(got, softmax(x), "softmax(x)", {"x": x}, mistake=mistake)
