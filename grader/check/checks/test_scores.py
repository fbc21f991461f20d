"""Hidden checks for exercise 1, attention_scores(q, k)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from grader.check.checks.harness import expect_array, expect_close, expect_unchanged, fail
from grader.check.checks.strategies import SEEDS, queries_and_keys
from grader.check.diagnosis import diagnose
from solutions.scores import attention_scores

EXERCISE = "scores"


def scores_of(student, q, k):
    """The student's scores, checked to be a (..., T, S) float array."""
    got = student.call("scores", "attention_scores", q, k).value
    expect_array(got, q.shape[:-1] + k.shape[-2:-1], "attention_scores(q, k)", {"q": q, "k": k})
    return got


@given(queries_and_keys())
def test_matches_reference(student, qk):
    """Every entry is q[i]·k[j] / √d, for any batch axes."""
    q, k = qk
    got = scores_of(student, q, k)
    expected = attention_scores(q, k)
    expect_close(got, expected, "attention_scores(q, k)", {"q": q, "k": k}, mistake=lambda: diagnose("attention_scores", (q, k), got))


@given(st.integers(1, 64))
def test_ones_score_sqrt_d(student, d):
    """A query and a key of d ones score d / √d = √d."""
    q = np.ones((1, d))
    got = scores_of(student, q, q.copy())
    if not np.allclose(got, np.sqrt(d), rtol=1e-9):
        mistake = diagnose("attention_scores", (q, q), got)
        fail(f"A query and a key of {d} ones should score {d}/√{d} = √{d}.", {"q": q, "k": q}, np.sqrt([[d]]), got, mistake)


@given(queries_and_keys(), SEEDS)
def test_keys_permute_columns(student, qk, shuffle):
    """Reordering the keys reorders the columns of the scores the same way."""
    q, k = qk
    order = np.random.default_rng(shuffle).permutation(k.shape[-2])
    plain, shuffled = scores_of(student, q, k), scores_of(student, q, k[..., order, :])
    if not np.allclose(shuffled, plain[..., order], rtol=1e-6, atol=1e-9):
        fail(
            f"Reordering the keys as {order.tolist()} should reorder the columns of the scores the same way.",
            {"q": q, "k": k},
            plain[..., order],
            shuffled,
        )


@given(queries_and_keys())
def test_inputs_unchanged(student, qk):
    """q and k are the same after the call."""
    q, k = qk
    outcome = student.call("scores", "attention_scores", q, k)
    expect_unchanged({"q": q, "k": k}, outcome.args, "attention_scores")
