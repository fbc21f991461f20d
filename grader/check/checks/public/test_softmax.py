"""Public checks for exercise 3, softmax(x) along the last axis: properties, worked examples and the definition per entry.

None needs the reference, and none holds the vectorised answer: what is right is stated entry by entry.
"""

import copy
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from grader.check.advice import warning_advice
from grader.check.checks import scale
from grader.check.checks.examples import examples, expect_example
from grader.check.checks.harness import (
    FORWARD,
    expect_array,
    expect_close,
    expect_no_warnings,
    fail,
)
from grader.check.checks.judged import judges
from grader.check.checks.profiles import FEW
from grader.check.checks.replay import replayed
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import SHIFTS, softmax_inputs
from grader.check.checks.unchanged import expect_unchanged

EXERCISE = "softmax"
# every score shifted: near 0, or far from it (the log-sum-exp way keeps 1e-6 up to about 1e10)
FAR = st.sampled_from((0.0, -3e9, 3e9))
# a row's one finite score, beyond float32's range (3.4e38)
LONE = st.sampled_from((1e300, -1e300, 1e39))


def shares_of(submission, x):
    """The student's softmax of x, checked to be a NaN-free float array shaped like x."""
    got = submission.call("softmax", "softmax", x).value
    if type(got) is np.ndarray and got.shape == x.shape and np.isnan(got).any():
        rows = np.isnan(got).any(axis=-1)
        what = f"softmax(x) contains NaN (not a number) in {rows.sum()} row(s): look for 0 / 0, inf / inf, inf - inf or exp overflowing."
        fail(what, {"x": x}, got=got, mistake=overflow(x, got))
    expect_array(got, x.shape, "softmax(x)", {"x": x})
    return got


def overflow(x: np.ndarray, got: np.ndarray) -> str | None:
    """The known mistake of exp(x) without the shift, when its code gives got on x, else None.

    That code gives NaN where exp(x) overflows and 0 beside it (inf / inf, finite / inf), 0 in a row whose
    sum alone overflows, NaN in a row whose every exp underflows (0 / 0), and the softmax elsewhere (by its
    definition, entry by entry: the share function). An input too large to go through entry by entry names nothing.
    """
    if x.size > 4096:
        return None
    with np.errstate(all="ignore"):
        e = np.exp(x)
    for index in np.ndindex(x.shape[:-1]):
        row = [float(v) for v in x[index]]
        if np.isinf(e[index]).any() or np.isinf(np.sum(e[index])):
            want = np.where(np.isinf(e[index]), np.nan, 0.0)
        elif not e[index].any():
            want = np.full(len(row), np.nan)
        else:
            want = np.array([share(row, j) for j in range(len(row))])
        if not np.allclose(got[index], want, rtol=1e-6, atol=1e-9, equal_nan=True):
            return None
    return "exp without subtracting each row's maximum first (it overflows past 709)"


@judges("softmax")
@at_scale(lambda: scale.masked(1e4))
@given(softmax_inputs(bound=1e4))
def test_rows_sum_to_one(submission, x):
    """Every entry >= 0 and every row sums to 1, even for scores up to ±1e4."""
    got = shares_of(submission, x)
    sums = got.sum(axis=-1)
    if (got < 0).any() or not np.allclose(sums, 1.0, rtol=0, atol=1e-9):
        far = np.unravel_index(int(np.argmax(np.abs(sums - 1.0))), sums.shape)
        total = float(sums[far])
        row = f"row {tuple(int(i) for i in far)}" if sums.ndim else "the row"
        told = f"{row} sums to {total!r}, 1 {'-' if total < 1 else '+'} {abs(total - 1.0):.3g}"
        told += f", and the smallest share is {got.min():g}" if (got < 0).any() else ""
        rule = "Every share should be >= 0 and every row should sum to 1 (within 1e-9)"
        fail(f"{rule}: {told}.", {"x": x}, got=got, mistake=epsilon_below(x, got))


def share(row: list[float], j: int) -> float:
    """softmax's definition for one entry, exp(x_j) / sum over k of exp(x_k), written as 1 / sum over k of exp(x_k - x_j)."""
    if row[j] == -math.inf:
        return 0.0
    below = 0.0
    for score in row:
        gap = score - row[j]
        # a gap beyond exp's range: this entry's share is 0
        below += math.exp(gap) if gap < 709 else math.inf
    return 1.0 / below


def epsilon_below(x: np.ndarray, got: np.ndarray) -> str | None:
    """The known mistake of a small number added to the sum below the line, when got is exactly that, else None."""
    sums, tops = got.sum(axis=-1), got.max(axis=-1)
    with np.errstate(all="ignore"):
        added = (1.0 - sums) / tops  # what was added to each row's sum, were that the mistake
    far = np.unravel_index(int(np.argmax(np.abs(sums - 1.0))), sums.shape)
    row = [float(v) for v in x[far]]
    # the row that sums to the least, by the definition
    right = np.array([share(row, j) for j in range(len(row))])
    total = 1.0 / right.max()  # the row's sum once its maximum is subtracted
    for epsilon in (1e-12, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4):
        if np.allclose(added, epsilon, rtol=0.05, atol=0) and np.allclose(
            got[far], right * total / (total + epsilon), rtol=1e-9, atol=0
        ):
            return (
                f"a small number ({epsilon:g}) added to the sum below the line. It is never needed: once each row's "
                "maximum is subtracted the sum is at least 1 (the largest entry is exp(0) = 1), and it makes every row "
                "sum to a little less than 1"
            )
    return None


def by_definition(x: np.ndarray) -> np.ndarray:
    """softmax(x) entry by entry, by its definition (share)."""
    rows = x.reshape(-1, x.shape[-1]).tolist()
    return np.array([[share(row, j) for j in range(len(row))] for row in rows]).reshape(x.shape)


@judges("softmax")
@replayed
@FEW
@given(softmax_inputs(), FAR, LONE)
def test_each_share_by_its_definition(submission, x, c, lone):
    """Each share is exp(x_j) / sum over k of exp(x_k), for two inputs of one shape in a row, near 0 or far from it.

    The second call shows a function that keeps something from one call to the next; scores far below
    0 show -inf turned into a large negative number; a row's lone finite score beyond float32's range, float32.
    """
    far = "" if c == 0 else f" for scores far from 0 (every drawn score shifted by {c:g})"
    last = np.where(np.isneginf(x[..., :1]), 0.0, x[..., :1]) + lone
    # one finite score a row, the last
    alone = np.where(np.arange(x.shape[-1]) == x.shape[-1] - 1, last, -np.inf)
    for y, said in (
        (x + c, far),
        (alone, f" for rows whose one finite score is far from 0 (about {lone:g})"),
    ):
        expect_close(
            shares_of(submission, y), by_definition(y), f"softmax(x){said},", {"x": y}, FORWARD
        )


@judges("softmax")
@at_scale(lambda: scale.masked(10.0), lambda: 1234.5678)
@given(softmax_inputs(bound=10.0), SHIFTS)
def test_shift_invariant(submission, x, c):
    """Adding the same number to every score of a row leaves the shares unchanged."""
    plain, shifted = shares_of(submission, x), shares_of(submission, x + c)
    if not np.allclose(shifted, plain, rtol=1e-6, atol=1e-9):
        fail(
            f"softmax(x + {c!r}) should equal softmax(x): adding one number to a whole row changes nothing.",
            {"x": x},
            plain,
            shifted,
        )


@judges("softmax")
@at_scale(scale.masked)
@given(softmax_inputs())
def test_minus_inf_gives_exactly_zero(submission, x):
    """A -inf score gets a share of exactly 0."""
    got = shares_of(submission, x)
    hidden = np.isneginf(x)
    if (got[hidden] != 0).any():
        fail("Every -inf score should get a share of exactly 0.", {"x": x}, got=got)


@judges("softmax", guard=True)
@at_scale(scale.masked)
@FEW
@given(softmax_inputs())
def test_inputs_unchanged(submission, x):
    """x is the same after the call."""
    before = copy.deepcopy(x)
    outcome = submission.call("softmax", "softmax", x)
    expect_unchanged({"x": before}, outcome.args, "softmax")


@judges("softmax")
@at_scale(lambda: scale.masked(1e4))
@given(softmax_inputs(bound=1e4))
def test_no_warnings_on_extreme_inputs(submission, x):
    """No RuntimeWarning for finite scores up to ±1e4, with or without -inf entries, and shares free of NaN there."""
    outcome = submission.call("softmax", "softmax", x)
    rule = (
        "It should give none for any finite scores, however large, nor for rows with -inf entries"
    )
    expect_no_warnings(outcome, "softmax(x)", {"x": x}, rule, warning_advice)
    # the warnings are the worker's word (np.errstate silences them): the grader looks at the shares too
    shares_of(submission, x)


@judges("softmax")
def test_worked_examples(submission):
    """Masked scores and logits, from a few numbers up to the comparison's float32 sizes."""
    for example in examples("softmax.softmax"):
        expect_example(submission.call("softmax", "softmax", *example.args()).value, example)
