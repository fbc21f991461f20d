"""Hidden checks for exercise 5: softmax_backward, attention_head_backward and train against the reference."""

from hypothesis import given

from grader.check.checks import scale
from grader.check.checks.harness import GRADIENT, expect_close, expect_precise, fail
from grader.check.checks.judged import judges
from grader.check.checks.public.test_training import GRAD_NAMES, HEAD_NAMES, LATER
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import head_grads, softmax_grads
from grader.check.checks.where import which_wrong, wrong_parts
from grader.check.diagnosis import diagnose
from solutions.softmax import softmax
from solutions.training import attention_head_backward, softmax_backward

EXERCISE = "training"


@judges("softmax_backward")
@at_scale(lambda: scale.softmax_grads(masked=True))
@given(softmax_grads(masked=True))
def test_softmax_backward_matches_reference(submission, drawn):
    """The gradient equals the reference's, with -inf scores (zero shares) and any batch axes, to float64's precision."""
    x, d_shares = drawn
    shares = softmax(x)
    got = submission.call("training", "softmax_backward", shares, d_shares).value
    inputs = {"shares": shares, "d_shares": d_shares}
    mistake = lambda: diagnose("softmax_backward", (shares, d_shares), got, submission=submission)  # noqa: E731
    expected = softmax_backward(shares, d_shares)
    expect_close(got, expected, "softmax_backward(shares, d_shares)", inputs, GRADIENT, mistake)
    expect_precise(got, expected, "softmax_backward(shares, d_shares)", inputs)


@judges("attention_head_backward")
@at_scale(scale.head_grads)
@given(head_grads())
def test_head_backward_matches_reference(submission, args):
    """All four gradients equal the reference's, weight gradients summed over the batch axes, to float64's precision."""
    got = submission.call("training", "attention_head_backward", *args, reference=LATER).value
    inputs = dict(zip(HEAD_NAMES, args))
    if not isinstance(got, (tuple, list)) or len(got) != 4:
        fail(
            "attention_head_backward should return four arrays (d_x, d_w_q, d_w_k, d_w_v).",
            inputs,
            got=got,
        )
    expected = attention_head_backward(*args)
    wrong = wrong_parts(GRAD_NAMES, got, expected, GRADIENT)
    for n, (name, mine, theirs) in enumerate(zip(GRAD_NAMES, got, expected)):
        mistake = lambda mine=mine, n=n: diagnose(  # noqa: E731
            "attention_head_backward", args, mine, n, submission, LATER
        )
        expect_close(
            mine,
            theirs,
            name,
            inputs,
            GRADIENT,
            mistake,
            where=lambda: which_wrong(list(GRAD_NAMES), wrong, "gradients"),
        )
    for name, mine, theirs in zip(GRAD_NAMES, got, expected):
        expect_precise(mine, theirs, name, inputs)
