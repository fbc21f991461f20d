"""Hidden checks for exercise 1, attention_scores(q, k): the reference on drawn inputs."""

from hypothesis import given

from grader.check.checks import scale
from grader.check.checks.harness import expect_close
from grader.check.checks.judged import judges
from grader.check.checks.public.test_scores import scores_of
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import queries_and_keys
from grader.check.diagnosis import diagnose
from solutions.scores import attention_scores

EXERCISE = "scores"


@judges("attention_scores")
@at_scale(scale.queries_and_keys)
@given(queries_and_keys())
def test_matches_reference(submission, qk):
    """Every entry is q[i]·k[j] / √d, for any batch axes."""
    q, k = qk
    got = scores_of(submission, q, k)
    expected = attention_scores(q, k)
    expect_close(
        got,
        expected,
        "attention_scores(q, k)",
        {"q": q, "k": k},
        mistake=lambda: diagnose("attention_scores", (q, k), got, submission=submission),
    )
