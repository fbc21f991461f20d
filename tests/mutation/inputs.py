"""The inputs an equivalent mutant is run on beside the reference: every function's, small to the comparison's sizes, extremes included.

Shapes from one entry to batches of the comparison's sizes; values near 0, far from it (±3e9,
±1e150, ±1e300), tiny (1e-150), whole numbers, ties, -inf in masked scores, float32 as the
comparison hands them; dicts in the comparison's orders; a list and a tuple of heads.
"""

import numpy as np

from grader.sandbox.worker.toymodel import BatchFeed, LinearModel

# batch, T, C, d, d_v
SIZES = [
    ((), 1, 1, 1, 1),
    ((), 3, 2, 2, 2),
    ((2,), 4, 3, 2, 3),
    ((2, 3), 5, 3, 4, 2),
    ((1,), 12, 32, 32, 128),
]
SCALES = [1.0, 1e-150, 1e150, 3e9]


def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng([20261204, *key])


def _kinds(x: np.ndarray) -> list[np.ndarray]:
    """x as drawn, rounded to whole numbers (ties), and as float32 where float32 holds it."""
    return [x, np.round(x)] + ([x.astype(np.float32)] if np.abs(x).max() < 1e38 else [])


def _masked(x: np.ndarray, rng: np.random.Generator, share: float) -> np.ndarray:
    """x with about this share of its entries -inf, never a whole row."""
    hidden = rng.random(x.shape) < share
    hidden[..., -1] &= ~hidden[..., :-1].all(axis=-1)
    return np.where(hidden, -np.inf, x)


def attention_scores() -> list[tuple]:
    found = []
    for n, (batch, t, _, d, _) in enumerate(SIZES):
        for m, scale in enumerate(SCALES):
            rng = _rng(1, n, m)
            q, k = (
                rng.normal(size=batch + (t, d)) * scale,
                rng.normal(size=batch + (t + 1, d)) * scale,
            )
            found += [(a, b) for a, b in zip(_kinds(q), _kinds(k))]
    return found + [(np.zeros((2, 3)), np.zeros((4, 3)))]


def causal_mask() -> list[tuple]:
    return [(t,) for t in (1, 2, 3, 5, 8, 12, 141)]


def square_scores() -> list[np.ndarray]:
    found = []
    for n, (batch, t, *_) in enumerate(SIZES):
        for m, scale in enumerate([*SCALES, 1e300]):
            rng = _rng(2, n, m)
            x = rng.normal(size=batch + (t, t)) * scale
            found += [*_kinds(x), _masked(x, rng, 0.3), _masked(x, rng, 0.7)]
    return found


def apply_causal_mask() -> list[tuple]:
    return [(x,) for x in square_scores()]


def softmax() -> list[tuple]:
    found = [(x,) for x in square_scores()]
    for n, s in enumerate((1, 2, 6, 40)):
        rng = _rng(3, n)
        x = rng.normal(size=(3, s)) * 5
        found += [(x + c,) for c in (0.0, -3e9, 3e9, 700.0, -700.0)]
        lone = np.where(np.arange(s) == s - 1, x, -np.inf)
        found += [(lone + c,) for c in (0.0, 1e300, -1e300, 1e39)]
    return found


def head_inputs() -> list[tuple]:
    found = []
    for n, (batch, t, c, d, d_v) in enumerate(SIZES):
        for scale in (1.0, 30.0):  # 30: scores far apart, some shares below 1e-45
            rng = _rng(4, n, int(scale))
            x, w_q, w_k, w_v = (
                rng.normal(size=batch + (t, c)) * scale,
                rng.normal(size=(c, d)),
                rng.normal(size=(c, d)),
                rng.normal(size=(c, d_v)),
            )
            found += [(x, w_q, w_k, w_v), tuple(a.astype(np.float32) for a in (x, w_q, w_k, w_v))]
    return found


def attention_head() -> list[tuple]:
    return head_inputs()


def multi_head_attention() -> list[tuple]:
    found = []
    for n, (x, w_q, w_k, w_v) in enumerate(head_inputs()):
        rng = _rng(5, n)
        heads = [
            (w_q, w_k, w_v),
            tuple(rng.normal(size=w.shape).astype(w.dtype) for w in (w_q, w_k, w_v)),
        ]
        w_o = rng.normal(size=(2 * w_v.shape[-1], 3)).astype(x.dtype)
        found += [(x, heads, w_o), (x, heads[:1], w_o[: w_v.shape[-1]]), (x, tuple(heads), w_o)]
    return found


def softmax_backward() -> list[tuple]:
    found = []
    for (x,) in softmax():
        with np.errstate(all="ignore"):
            top = np.max(x, axis=-1, keepdims=True)
            e = np.exp(x - top)
            shares = e / e.sum(axis=-1, keepdims=True)
        d_shares = _rng(6, x.size).normal(size=x.shape).astype(x.dtype)
        scales = (1.0, 2.0**600, 2.0**-600) if x.dtype == np.float64 else (1.0,)
        found += [(shares, d_shares * s) for s in scales] + [(shares, d_shares + 1e6)]
    return found


def attention_head_backward() -> list[tuple]:
    found = []
    for n, (x, w_q, w_k, w_v) in enumerate(head_inputs()):
        d_out = _rng(7, n).normal(size=x.shape[:-1] + w_v.shape[-1:]).astype(x.dtype)
        scales = (1.0, 2.0**600, 2.0**-600) if x.dtype == np.float64 else (1.0,)
        found += [(d_out * s, x, w_q, w_k, w_v) for s in scales]
    return found


def _comparison_like(rng: np.random.Generator, dtype) -> tuple[dict, dict]:
    shapes = {
        "emb": (40, 16),
        "w1": (128, 128),
        "b1": (128,),
        "w2": (128, 40),
        "b2": (40,),
        "w_q": (32, 32),
    }
    params = {name: rng.normal(size=shape).astype(dtype) for name, shape in shapes.items()}
    # the layers' backward order, as the comparison's models give gradients
    order = ["w2", "b2", "w1", "b1", "emb", "w_q"]
    return params, {name: rng.normal(size=shapes[name]).astype(dtype) for name in order}


def sgd_step() -> list[tuple]:
    found = []
    for n, dtype in enumerate((np.float64, np.float32)):
        params, grads = _comparison_like(_rng(8, n), dtype)
        found += [(params, grads, lr) for lr in (0.02, 0.5)]
    found.append(
        (
            {"w": np.ones((2, 3)), "b": np.zeros(3)},
            {"b": np.ones(3), "w": np.full((2, 3), 1e300)},
            0.1,
        )
    )
    return found


def train() -> list[tuple]:
    found = []
    for n, (c, o, steps) in enumerate(((1, 1, 1), (3, 2, 4), (8, 2, 20))):
        rng = _rng(9, n)
        params = {"w": rng.normal(size=(c, o)), "b": rng.normal(size=(o,))}
        pairs = [(rng.normal(size=(5, c)), rng.normal(size=(5, o))) for _ in range(steps + 2)]
        found += [(LinearModel(params), BatchFeed(pairs), steps, lr) for lr in (0.1, 0.01)]
    return found


BY_FUNCTION = {
    name: globals()[name]
    for name in (
        "attention_scores",
        "causal_mask",
        "apply_causal_mask",
        "softmax",
        "attention_head",
        "multi_head_attention",
        "softmax_backward",
        "attention_head_backward",
        "sgd_step",
        "train",
    )
}
