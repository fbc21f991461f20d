"""Hidden checks for exercise 5: softmax_backward, attention_head_backward and train against the reference."""

from hypothesis import given
from hypothesis import strategies as st

from grader.check.checks import scale
from grader.check.checks.harness import GRADIENT, expect_close, fail
from grader.check.checks.judged import judges
from grader.check.checks.public.test_training import GRAD_NAMES, HEAD_NAMES, LATER, head_grads
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import fill, softmax_inputs
from grader.check.checks.where import which_wrong, wrong_parts
from grader.check.diagnosis import diagnose
from solutions.softmax import softmax
from solutions.training import attention_head_backward, softmax_backward

EXERCISE = "training"


@st.composite
def softmax_grads(draw):
    """shares = softmax(x), with -inf scores, and d_shares shaped like them."""
    x = draw(softmax_inputs(bound=3.0))
    return x, softmax(x), fill(draw, x.shape, 2.0)


def softmax_grads_at_scale() -> tuple:
    """shares of the comparison's masked scores, and d_shares."""
    x = scale.masked(3.0)
    return x, softmax(x), scale.values(x.shape, 2.0, 1)


@judges("softmax_backward")
@at_scale(softmax_grads_at_scale)
@given(softmax_grads())
def test_softmax_backward_matches_reference(submission, drawn):
    """The gradient equals the reference's, with -inf scores (zero shares) and any batch axes."""
    x, shares, d_shares = drawn
    got = submission.call("training", "softmax_backward", shares, d_shares).value
    inputs = {"shares": shares, "d_shares": d_shares}
    mistake = lambda: diagnose("softmax_backward", (shares, d_shares), got, submission=submission)  # noqa: E731
    expect_close(got, softmax_backward(shares, d_shares), "softmax_backward(shares, d_shares)", inputs, GRADIENT, mistake)


@judges("attention_head_backward")
@at_scale(scale.head_grads)
@given(head_grads())
def test_head_backward_matches_reference(submission, args):
    """All four gradients equal the reference's, weight gradients summed over the batch axes."""
    got = submission.call("training", "attention_head_backward", *args, reference=LATER).value
    inputs = dict(zip(HEAD_NAMES, args))
    if not isinstance(got, (tuple, list)) or len(got) != 4:
        fail("attention_head_backward should return four arrays (d_x, d_w_q, d_w_k, d_w_v).", inputs, got=got)
    expected = attention_head_backward(*args)
    wrong = wrong_parts(GRAD_NAMES, got, expected, GRADIENT)
    for n, (name, mine, theirs) in enumerate(zip(GRAD_NAMES, got, expected)):
        mistake = lambda mine=mine, n=n: diagnose("attention_head_backward", args, mine, n, submission, LATER)  # noqa: E731
        expect_close(mine, theirs, name, inputs, GRADIENT, mistake, where=lambda: which_wrong(list(GRAD_NAMES), wrong, "gradients"))
