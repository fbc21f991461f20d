"""Hidden checks for exercise 4, attention_head and multi_head_attention: the reference on drawn inputs (earlier ones: the reference)."""

from hypothesis import given

from grader.check.checks import scale
from grader.check.checks.harness import expect_close
from grader.check.checks.judged import judges
from grader.check.checks.public.test_heads import NAMES, head_of, multi_head_of
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import head_inputs, multi_head_inputs
from grader.check.diagnosis import diagnose
from solutions.heads import attention_head, multi_head_attention

EXERCISE = "heads"


@judges("attention_head")
@at_scale(scale.head)
@given(head_inputs())
def test_head_matches_reference(submission, args):
    """out and shares equal the reference's, for any batch axes."""
    out, shares = head_of(submission, args)
    expected_out, expected_shares = attention_head(*args)
    inputs = dict(zip(NAMES, args))
    expect_close(
        shares,
        expected_shares,
        "shares",
        inputs,
        mistake=lambda: diagnose("attention_head", args, shares, 1, submission),
    )
    expect_close(
        out,
        expected_out,
        "out",
        inputs,
        mistake=lambda: diagnose("attention_head", args, out, 0, submission),
    )


@judges("multi_head_attention")
@at_scale(scale.multi_head)
@given(multi_head_inputs())
def test_multi_head_matches_reference(submission, args):
    """The head outputs joined in order, times w_o, and each head's shares."""
    x, heads, w_o = args
    inputs = {"x": x, "heads": heads, "w_o": w_o}
    got = multi_head_of(submission, x, heads, w_o)
    expected_out, expected_shares = multi_head_attention(x, heads, w_o)
    expect_close(
        got[0],
        expected_out,
        "out",
        inputs,
        mistake=lambda: diagnose("multi_head_attention", args, got[0], submission=submission),
    )
    for h, (mine, theirs) in enumerate(zip(got[1], expected_shares)):
        expect_close(mine, theirs, f"the shares of head {h}", inputs)
