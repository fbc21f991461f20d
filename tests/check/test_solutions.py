"""The reference solutions meet their docstrings' contract on Hypothesis-drawn inputs, batch axes included."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from solutions.heads import attention_head, multi_head_attention
from solutions.masking import apply_causal_mask, causal_mask
from solutions.scores import attention_scores
from solutions.softmax import softmax
from solutions.training import attention_head_backward, sgd_step, softmax_backward, train

settings.register_profile("kit", max_examples=60, deadline=None, derandomize=True, database=None)
settings.load_profile("kit")

batch_axes = st.lists(st.integers(1, 3), max_size=2).map(tuple)
sizes = st.integers(1, 5)


def floats(bound):
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False, width=64)


def array(shape, bound=3.0):
    return arrays(np.float64, shape, elements=floats(bound))


@st.composite
def head_inputs(draw, bound=2.0):
    """x (..., T, C) and weights w_q, w_k (C, d), w_v (C, d_v)."""
    batch, T, C, d, d_v = draw(batch_axes), draw(sizes), draw(sizes), draw(sizes), draw(sizes)
    return (
        draw(array(batch + (T, C), bound)),
        draw(array((C, d), bound)),
        draw(array((C, d), bound)),
        draw(array((C, d_v), bound)),
    )


def loop_softmax(row):
    """Softmax of one row, one entry at a time."""
    top = max(row)
    e = [0.0 if v == -np.inf else np.exp(v - top) for v in row]
    return [v / sum(e) for v in e]


def loop_head(x, w_q, w_k, w_v):
    """attention_head for one (T, C) input, position by position."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    T, d = q.shape
    out, shares = np.zeros((T, v.shape[1])), np.zeros((T, T))
    for i in range(T):
        row = [q[i] @ k[j] / np.sqrt(d) for j in range(i + 1)]
        shares[i, : i + 1] = loop_softmax(row)
        out[i] = shares[i, : i + 1] @ v[: i + 1]
    return out, shares


def unchanged_after(function, *args):
    """Call function and assert it left every array argument as it was."""
    copies = [np.copy(a) for a in args]
    result = function(*args)
    for before, after in zip(copies, args):
        np.testing.assert_array_equal(before, after)
    return result


def numeric_gradient(f, x, eps=1e-6):
    """Central finite differences of the scalar f at x."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


@given(batch_axes, sizes, sizes, sizes, st.data())
def test_scores_are_scaled_dot_products(batch, T, S, d, data):
    q = data.draw(array(batch + (T, d)))
    k = data.draw(array(batch + (S, d)))
    scores = unchanged_after(attention_scores, q, k)
    assert type(scores) is np.ndarray and scores.shape == batch + (T, S)
    for index in np.ndindex(batch + (T, S)):
        *b, i, j = index
        expected = sum(q[(*b, i, c)] * k[(*b, j, c)] for c in range(d)) / np.sqrt(d)
        np.testing.assert_allclose(scores[index], expected, rtol=1e-9, atol=1e-9)


@given(st.integers(1, 12))
def test_causal_mask_allows_j_up_to_i(T):
    mask = causal_mask(T)
    assert mask.dtype == bool and mask.shape == (T, T)
    i, j = np.indices((T, T))
    np.testing.assert_array_equal(mask, j <= i)


@given(batch_axes, sizes, st.data())
def test_apply_causal_mask_hides_the_future_only(batch, T, data):
    scores = data.draw(array(batch + (T, T), 1e4))
    masked = unchanged_after(apply_causal_mask, scores)
    assert masked.shape == scores.shape
    above = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert np.all(masked[..., above] == -np.inf)
    np.testing.assert_array_equal(masked[..., ~above], scores[..., ~above])


@given(batch_axes, sizes, st.data())
def test_softmax_rows_are_shares(batch, S, data):
    x = data.draw(array(batch + (S,), 1e4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shares = unchanged_after(softmax, x)
    assert shares.shape == x.shape and np.all(shares >= 0)
    np.testing.assert_allclose(shares.sum(axis=-1), 1.0, rtol=1e-12)
    for index in np.ndindex(batch):
        np.testing.assert_allclose(
            shares[index], loop_softmax(list(x[index])), rtol=1e-9, atol=1e-300
        )


@given(batch_axes, sizes, floats(1e4), st.data())
def test_softmax_ignores_a_shift(batch, S, shift, data):
    x = data.draw(array(batch + (S,), 1e4))
    np.testing.assert_allclose(softmax(x + shift), softmax(x), rtol=1e-6, atol=1e-12)


@given(batch_axes, sizes, st.data())
def test_softmax_gives_minus_inf_exactly_zero(batch, T, data):
    scores = apply_causal_mask(data.draw(array(batch + (T, T), 1e4)))
    shares = softmax(scores)
    assert np.all(shares[..., np.triu(np.ones((T, T), dtype=bool), k=1)] == 0.0)
    np.testing.assert_allclose(shares.sum(axis=-1), 1.0, rtol=1e-12)


def test_softmax_never_overflows_or_warns_at_the_float_range():
    x = np.array([[np.finfo(float).max, -np.finfo(float).max, 0.0], [-1e308, -np.inf, -1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shares = softmax(x)
    np.testing.assert_array_equal(shares, [[1.0, 0.0, 0.0], [0.5, 0.0, 0.5]])


@given(head_inputs())
def test_attention_head_matches_position_by_position(inputs):
    x, w_q, w_k, w_v = inputs
    out, shares = unchanged_after(attention_head, *inputs)
    T = x.shape[-2]
    assert out.shape == x.shape[:-1] + (w_v.shape[1],) and shares.shape == x.shape[:-1] + (T,)
    for index in np.ndindex(x.shape[:-2]):
        expected_out, expected_shares = loop_head(x[index], w_q, w_k, w_v)
        np.testing.assert_allclose(out[index], expected_out, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(shares[index], expected_shares, rtol=1e-9, atol=1e-12)


@given(head_inputs(), st.data())
def test_attention_head_is_causal(inputs, data):
    x, w_q, w_k, w_v = inputs
    T = x.shape[-2]
    t = data.draw(st.integers(0, T - 1))
    changed = x.copy()
    changed[..., t + 1 :, :] = data.draw(array(changed[..., t + 1 :, :].shape))
    before, after = attention_head(x, w_q, w_k, w_v)[0], attention_head(changed, w_q, w_k, w_v)[0]
    np.testing.assert_array_equal(before[..., : t + 1, :], after[..., : t + 1, :])


@pytest.mark.slow
@given(head_inputs(), st.integers(1, 3), st.integers(1, 4), st.data())
def test_multi_head_joins_heads_in_order(inputs, H, C_out, data):
    x, w_q, w_k, w_v = inputs
    C, d, d_v = w_q.shape[0], w_q.shape[1], w_v.shape[1]
    heads = [
        (data.draw(array((C, d))), data.draw(array((C, d))), data.draw(array((C, d_v))))
        for _ in range(H)
    ]
    w_o = data.draw(array((H * d_v, C_out)))
    out, shares = multi_head_attention(x, heads, w_o)
    singles = [attention_head(x, *head) for head in heads]
    np.testing.assert_allclose(
        out, np.concatenate([o for o, _ in singles], axis=-1) @ w_o, rtol=1e-12
    )
    assert len(shares) == H
    for got, (_, expected) in zip(shares, singles):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.slow
@given(batch_axes, sizes, st.data())
def test_softmax_backward_matches_finite_differences(batch, S, data):
    x = data.draw(array(batch + (S,)))
    d_shares = data.draw(array(batch + (S,)))
    expected = numeric_gradient(lambda z: np.sum(d_shares * softmax(z)), x)
    got = unchanged_after(softmax_backward, softmax(x), d_shares)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-7)


@pytest.mark.slow
@given(head_inputs(bound=1.0), st.data())
def test_attention_head_backward_matches_finite_differences(inputs, data):
    x, w_q, w_k, w_v = inputs
    d_out = data.draw(array(x.shape[:-1] + (w_v.shape[1],), 1.0))
    got = unchanged_after(attention_head_backward, d_out, *inputs)
    for position, (name, value) in enumerate(zip(("x", "w_q", "w_k", "w_v"), inputs)):

        def loss(z, position=position):
            args = list(inputs)
            args[position] = z
            return np.sum(d_out * attention_head(*args)[0])

        assert got[position].shape == value.shape, name
        np.testing.assert_allclose(
            got[position], numeric_gradient(loss, value), rtol=1e-4, atol=1e-6, err_msg=name
        )


@given(
    arrays(np.float64, (3, 2), elements=floats(10)),
    arrays(np.float64, (3, 2), elements=floats(10)),
    floats(1),
)
def test_sgd_step_moves_against_the_gradient(p, g, lr):
    params, grads = {"w": p.copy(), "b": p[0].copy()}, {"w": g.copy(), "b": g[0].copy()}
    assert sgd_step(params, grads, lr) is None
    np.testing.assert_allclose(params["w"], p - lr * g)
    np.testing.assert_allclose(params["b"], p[0] - lr * g[0])
    np.testing.assert_array_equal(grads["w"], g)


class LineFit:
    """y ≈ x·w, least squares: a model small enough to follow by hand."""

    def __init__(self):
        self.params = {"w": np.zeros(2)}

    def loss_and_grads(self, x, y):
        error = x @ self.params["w"] - y
        return np.mean(error**2), {"w": 2 * x.T @ error / len(y)}


def test_train_steps_through_the_batches_and_returns_float_losses():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 8, 2))
    pairs = [(xb, xb @ np.array([2.0, -1.0])) for xb in x]
    batches = iter(pairs)
    model = LineFit()
    losses = train(model, batches, steps=40, lr=0.1)
    assert len(losses) == 40 and all(type(loss) is float for loss in losses)
    assert losses[-1] < 1e-3 * losses[0]
    assert len(list(batches)) == 10
    np.testing.assert_allclose(model.params["w"], [2.0, -1.0], atol=1e-2)
