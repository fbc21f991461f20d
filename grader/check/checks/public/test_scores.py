"""Public checks for exercise 1, attention_scores(q, k): properties and worked examples, none needing the reference."""

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
from grader.check.checks.strategies import SEEDS, queries_and_keys
from grader.check.checks.unchanged import expect_unchanged

EXERCISE = "scores"


def scores_of(submission, q, k):
    """The student's scores, checked to be a (..., T, S) float array."""
    got = submission.call("scores", "attention_scores", q, k).value
    expect_array(got, q.shape[:-1] + k.shape[-2:-1], "attention_scores(q, k)", {"q": q, "k": k})
    return got


@judges("attention_scores")
@at_scale(lambda: scale.D)
@given(st.integers(1, 64))
def test_ones_score_sqrt_d(submission, d):
    """A query and a key of d ones score d / √d = √d."""
    q = np.ones((1, d))
    got = scores_of(submission, q, q.copy())
    if not np.allclose(got, np.sqrt(d), rtol=1e-9):
        named = {
            "q·k without dividing by √d": d,
            "q·k divided by d instead of √d": 1.0,
            "q·k multiplied by √d instead of divided": d * np.sqrt(d),
            "q·k divided by √T, the number of positions (here 1), instead of √d": d,
            "// (floor division) in place of /: q·k divided by √d, then rounded down": d
            // np.sqrt(d),
        }
        # named if every failure agrees
        mistake = [
            name for name, value in named.items() if d > 1 and np.allclose(got, value, rtol=1e-9)
        ]
        fail(
            f"A query and a key of {d} ones should score {d}/√{d} = √{d}.",
            {"q": q, "k": q},
            np.sqrt([[d]]),
            got,
            mistake,
        )


@judges("attention_scores")
@at_scale(scale.queries_and_keys, lambda: 7)
@given(queries_and_keys(), SEEDS)
def test_keys_permute_columns(submission, qk, shuffle):
    """Reordering the keys reorders the columns of the scores the same way."""
    q, k = qk
    order = np.random.default_rng(shuffle).permutation(k.shape[-2])
    plain, shuffled = scores_of(submission, q, k), scores_of(submission, q, k[..., order, :])
    if not np.allclose(shuffled, plain[..., order], rtol=1e-6, atol=1e-9):
        fail(
            f"Reordering the keys as {order.tolist()} should reorder the columns of the scores the same way.",
            {"q": q, "k": k},
            plain[..., order],
            shuffled,
        )


@judges("attention_scores", guard=True)
@at_scale(scale.queries_and_keys)
@FEW
@given(queries_and_keys())
def test_inputs_unchanged(submission, qk):
    """q and k are the same after the call."""
    q, k = qk
    before = copy.deepcopy(qk)
    outcome = submission.call("scores", "attention_scores", q, k)
    expect_unchanged(dict(zip(("q", "k"), before)), outcome.args, "attention_scores")


@judges("attention_scores")
def test_worked_examples(submission):
    """The worked examples, from a few numbers up to the comparison's float32 head."""
    for example in examples("scores.attention_scores"):
        expect_example(
            submission.call("scores", "attention_scores", *example.args()).value, example
        )
