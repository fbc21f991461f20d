"""The inputs the checks draw: shapes from 1×1 up to two batch axes, float64 values."""

import numpy as np
from hypothesis import strategies as st

BATCH = st.lists(st.integers(1, 3), max_size=2).map(tuple)  # zero, one or two batch axes
SIZE = st.integers(1, 5)
SEEDS = st.integers(0, 999)  # few enough to shrink fast, many enough with the shapes
RATES = st.sampled_from((0.5, 0.1, 0.01))  # learning rates


# four significant digits, so a counterexample reads well; or every digit
DIGITS = st.sampled_from((4, None))
# whole numbers first, then any
SHIFTS = st.one_of(st.integers(-(10**4), 10**4).map(float), st.floats(-1e4, 1e4))


def _filled(shape: tuple, seed: int, bound: float, digits: int | None) -> np.ndarray:
    """Values spread over [-bound, bound], rounded to this many significant digits (None: not rounded)."""
    x = np.random.default_rng(seed).uniform(-bound, bound, shape)
    return x if digits is None else np.round(x, digits - 1 - int(np.floor(np.log10(bound))))


def fill(draw, shape: tuple, bound: float = 10.0) -> np.ndarray:
    """Inside a composite strategy: a float64 array of this shape with values in [-bound, bound].

    Hypothesis draws and shrinks the shapes; the values come from one drawn seed, which is many
    times faster than one draw per entry, and shrinks towards seed 0 and rounded values.
    """
    return _filled(tuple(shape), draw(SEEDS), bound, draw(DIGITS))


@st.composite
def queries_and_keys(draw, bound: float = 10.0):
    """q (..., T, d) and k (..., S, d) with the same batch axes."""
    batch, t, s, d = draw(BATCH), draw(SIZE), draw(SIZE), draw(st.integers(1, 4))
    return fill(draw, batch + (t, d), bound), fill(draw, batch + (s, d), bound)


@st.composite
def square_scores(draw, bound: float = 1e4, masked: bool = False):
    """Scores (..., T, T); some entries -inf when masked (scores masked before, by this mask or another)."""
    batch, t = draw(BATCH), draw(SIZE)
    scores = fill(draw, batch + (t, t), bound)
    return np.where(draw(hidden_entries(scores.shape)), -np.inf, scores) if masked else scores


@st.composite
def hidden_entries(draw, shape: tuple):
    """A bool array of this shape: True at about none, 30% or 70% of the entries."""
    share = draw(st.sampled_from((0.0, 0.3, 0.7)))
    return np.random.default_rng(draw(SEEDS)).random(shape) < share


@st.composite
def softmax_inputs(draw, bound: float = 10.0, masked: bool = True):
    """x (..., S), some entries -inf when masked, never a whole row."""
    batch, s = draw(BATCH), draw(st.integers(1, 6))
    x = fill(draw, batch + (s,), bound)
    if masked:
        hidden = draw(hidden_entries(batch + (s,)))
        hidden[..., -1] &= ~hidden[..., :-1].all(axis=-1)  # keep one entry of every row finite
        x = np.where(hidden, -np.inf, x)
    return x


@st.composite
def head_inputs(draw, bound: float = 2.0):
    """x (..., T, C), w_q and w_k (C, d), w_v (C, d_v)."""
    batch, t, c = draw(BATCH), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    d, d_v = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    x = fill(draw, batch + (t, c), bound)
    return x, fill(draw, (c, d), 1.0), fill(draw, (c, d), 1.0), fill(draw, (c, d_v), 1.0)


@st.composite
def multi_head_inputs(draw):
    """x (..., T, C), a list of H (w_q, w_k, w_v) and w_o (H·d_v, C_out)."""
    batch, t, c = draw(BATCH), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    n_heads, d, d_v, c_out = (
        draw(st.integers(1, 3)),
        draw(st.integers(1, 3)),
        draw(st.integers(1, 2)),
        draw(SIZE),
    )
    x = fill(draw, batch + (t, c), 2.0)
    heads = [tuple(fill(draw, (c, n), 1.0) for n in (d, d, d_v)) for _ in range(n_heads)]
    return x, heads, fill(draw, (n_heads * d_v, c_out), 1.0)


@st.composite
def softmax_grads(draw, masked: bool = False):
    """x (..., S), some entries -inf when masked, and d_shares shaped like it."""
    x = draw(softmax_inputs(bound=3.0, masked=masked))
    return x, fill(draw, x.shape, 2.0)


@st.composite
def head_grads(draw):
    """d_out and the inputs of a head."""
    x, w_q, w_k, w_v = draw(head_inputs())
    return fill(draw, x.shape[:-1] + w_v.shape[-1:], 2.0), x, w_q, w_k, w_v


@st.composite
def params_and_grads(draw):
    """A dict of parameters, gradients with the same names and shapes in a drawn order (the comparison's differ), and a learning rate."""
    names = draw(
        st.lists(
            st.sampled_from(["w", "b", "w_q", "w_k", "w_v"]), min_size=1, max_size=3, unique=True
        )
    )
    shapes = {
        name: draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple)) for name in names
    }
    params = {name: fill(draw, shape) for name, shape in shapes.items()}
    grads = {name: fill(draw, shape) for name, shape in shapes.items()}
    order = draw(st.permutations(names))
    return params, {name: grads[name] for name in order}, draw(RATES)
