"""Public checks for exercise 4, attention_head and multi_head_attention: properties and worked examples.

In the full kit the earlier exercises are the reference; in the student's kit they are the student's own.
"""

import copy

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from grader.check.checks import scale
from grader.check.checks.examples import examples, expect_example
from grader.check.checks.harness import FORWARD, expect_array, expect_close, fail
from grader.check.checks.judged import judges
from grader.check.checks.profiles import FEW
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import fill, head_inputs, multi_head_inputs
from grader.check.checks.unchanged import expect_unchanged
from grader.check.checks.where import heads_columns

EXERCISE = "heads"
NAMES = ("x", "w_q", "w_k", "w_v")


def head_of(submission, args):
    """The student's (out, shares), each checked to be a float array of the right shape."""
    got = submission.call("heads", "attention_head", *args).value
    inputs = dict(zip(NAMES, args))
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        fail("attention_head should return a pair (out, shares).", inputs, got=got)
    x, w_v = args[0], args[3]
    expect_array(
        got[0],
        x.shape[:-1] + w_v.shape[-1:],
        "out, the first thing attention_head returns,",
        inputs,
    )
    expect_array(
        got[1],
        x.shape[:-1] + x.shape[-2:-1],
        "shares, the second thing attention_head returns,",
        inputs,
    )
    return got


def multi_head_of(submission, x, heads, w_o):
    """The student's (out, list of shares) of multi_head_attention."""
    inputs = {"x": x, "heads": heads, "w_o": w_o}
    got = submission.call("heads", "multi_head_attention", x, heads, w_o).value
    if not isinstance(got, (tuple, list)) or len(got) != 2 or not isinstance(got[1], (tuple, list)):
        fail("multi_head_attention should return a pair (out, list of shares).", inputs, got=got)
    if len(got[1]) != len(heads):
        fail(
            f"multi_head_attention should return the shares of all {len(heads)} heads.",
            inputs,
            got=len(got[1]),
        )
    return got


@st.composite
def changed_later(draw):
    """A head's inputs, a position t, and x with every position after t drawn anew."""
    args = draw(head_inputs())
    x = args[0]
    t = draw(st.integers(0, x.shape[-2] - 1))
    changed = x.copy()
    changed[..., t + 1 :, :] = fill(draw, x[..., t + 1 :, :].shape, 2.0)
    return args, t, changed


def changed_at_scale() -> tuple:
    """The comparison's head, with x changed after position 100."""
    args = scale.head()
    changed = args[0].copy()
    changed[..., 101:, :] = scale.values(changed[..., 101:, :].shape, 2.0, 9)
    return args, 100, changed


@judges("attention_head")
@at_scale(changed_at_scale)
@given(changed_later())
def test_head_is_causal(submission, drawn):
    """Changing the input after position t leaves the outputs up to t unchanged."""
    args, t, changed = drawn
    x = args[0]
    out, _ = head_of(submission, args)
    out_changed, _ = head_of(submission, (changed,) + tuple(args[1:]))
    if not np.allclose(out[..., : t + 1, :], out_changed[..., : t + 1, :], rtol=1e-6, atol=1e-9):
        fail(
            f"Changing x after position {t} should leave out at positions 0..{t} unchanged: a position must not see ahead.",
            {"x": x, "x changed": changed},
            out[..., : t + 1, :],
            out_changed[..., : t + 1, :],
        )


@judges("attention_head")
@at_scale(scale.head)
@given(head_inputs())
def test_shares_are_causal_weights(submission, args):
    """Every row of the shares sums to 1 and everything above the diagonal is exactly 0."""
    _, shares = head_of(submission, args)
    above = scale.above_diagonal(shares.shape[-1])
    if (
        (shares < 0).any()
        or not np.allclose(shares.sum(-1), 1.0, atol=1e-9)
        or (shares[..., above] != 0).any()
    ):
        fail(
            "The shares should be >= 0, sum to 1 along each row and be exactly 0 above the diagonal.",
            dict(zip(NAMES, args)),
            got=shares,
        )


@judges("attention_head")
@at_scale(scale.head)
@given(head_inputs())
def test_out_is_shares_times_values(submission, args):
    """out is the head's own shares times the values x @ w_v."""
    out, shares = head_of(submission, args)
    x, w_v = args[0], args[3]
    what = "out, against your own shares times the values x @ w_v,"
    expect_close(out, np.matmul(shares, np.matmul(x, w_v)), what, dict(zip(NAMES, args)))


@judges("multi_head_attention")
@at_scale(scale.multi_head)
@given(multi_head_inputs())
def test_multi_head_joins_the_heads(submission, args):
    """multi_head_attention's out is the heads' outputs side by side, in order, times w_o; its shares are theirs."""
    x, heads, w_o = args
    inputs = {"x": x, "heads": heads, "w_o": w_o}
    out, shares = multi_head_of(submission, x, heads, w_o)
    alone = [head_of(submission, (x, *head)) for head in heads]
    joined = np.concatenate([one[0] for one in alone], axis=-1)  # (..., T, H·d_v)
    what = "out, against your own attention_head's outputs joined in order times w_o,"
    if where := heads_columns(
        out, [one[0] for one in alone], w_o
    ):  # which columns are wrong, when it can tell
        fail(f"{what} is not what it should be.", inputs, joined @ w_o, out, where=where)
    expect_close(out, joined @ w_o, what, inputs, FORWARD)
    for h, (mine, single) in enumerate(zip(shares, alone)):
        expect_close(
            mine, single[1], f"the shares of head {h}, against your own attention_head's,", inputs
        )


@judges("attention_head", "multi_head_attention", guard=True)
@at_scale(scale.multi_head)
@FEW
@given(multi_head_inputs())
def test_inputs_unchanged(submission, args):
    """x, the weights and w_o are the same after both calls, and heads the same list: as long, its tuples in order."""
    x, heads, w_o = args
    before = copy.deepcopy(args)
    outcome = submission.call("heads", "attention_head", x, *heads[0])
    expect_unchanged(dict(zip(NAMES, (before[0], *before[1][0]))), outcome.args, "attention_head")
    outcome = submission.call("heads", "multi_head_attention", x, heads, w_o)
    expect_unchanged(dict(zip(("x", "heads", "w_o"), before)), outcome.args, "multi_head_attention")


@judges("attention_head")
def test_head_worked_examples(submission):
    """attention_head on the worked examples, up to the comparison's own float32 head."""
    for example in examples("heads.attention_head"):
        expect_example(submission.call("heads", "attention_head", *example.args()).value, example)


@judges("multi_head_attention")
def test_multi_head_worked_examples(submission):
    """multi_head_attention with two heads on the worked examples."""
    for example in examples("heads.multi_head_attention"):
        expect_example(
            submission.call("heads", "multi_head_attention", *example.args()).value, example
        )
