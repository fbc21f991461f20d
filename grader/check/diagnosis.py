"""Known mistakes: wrong versions built from the reference, to name the one a student's output matches.

The full kit's only: it is built from the reference, so `grader release` leaves it out.
"""

import numpy as np

from grader.check.checks.harness import CheckFailed, Halt
from grader.check.checks.seen import SEEN
from grader.exercises import MODULE_OF
from solutions.heads import attention_head, multi_head_attention
from solutions.masking import apply_causal_mask, causal_mask
from solutions.scores import attention_scores
from solutions.softmax import softmax
from solutions.training import attention_head_backward, softmax_backward


def _t(a):
    """Swap the last two axes."""
    return np.swapaxes(a, -1, -2)


def _softmax_over(x, axis):
    """A stable softmax along any axis (None: over the whole array)."""
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)


def _softmax_unshifted(x):
    """exp(x) / sum(exp(x)) without subtracting the row's maximum."""
    with np.errstate(all="ignore"):
        e = np.exp(x)
        return e / np.sum(e, axis=-1, keepdims=True)


def _mask_with(scores, keep, fill):
    """Scores with fill wherever keep is False."""
    t = scores.shape[-1]
    return np.where(keep(np.ones((t, t), dtype=bool)), scores, fill)


def _head_with(x, w_q, w_k, w_v, *, keys=None, mask=True, scale=True):
    """attention_head with one piece changed: keys from other weights, no mask or no 1/√d."""
    q, k, v = x @ w_q, x @ (w_k if keys is None else keys), x @ w_v
    scores = q @ _t(k) / (np.sqrt(q.shape[-1]) if scale else 1.0)
    shares = softmax(apply_causal_mask(scores) if mask else scores)
    return shares @ v, shares


def _head_backward_with(d_out, x, w_q, w_k, w_v, *, scale=True, scores_path=True, x_paths="qkv"):
    """attention_head_backward with a piece left out: the 1/√d, the path through the scores, a path to x."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    shares = softmax(apply_causal_mask(attention_scores(q, k)))
    d_v = _t(shares) @ d_out
    d_scores = softmax_backward(shares, d_out @ _t(v)) * scores_path
    if scale:
        d_scores = d_scores / np.sqrt(q.shape[-1])
    d_q, d_k = d_scores @ k, _t(d_scores) @ q
    parts = {"q": d_q @ w_q.T, "k": d_k @ w_k.T, "v": d_v @ w_v.T}
    d_x = sum(parts[p] for p in x_paths)
    rows = x.reshape(-1, x.shape[-1])
    grads = [rows.T @ g.reshape(-1, g.shape[-1]) for g in (d_q, d_k, d_v)]
    return (d_x, *grads)


MISTAKES = {
    "attention_scores": [
        ("q·k without dividing by √d", lambda q, k: q @ _t(k)),
        ("q·k divided by d instead of √d", lambda q, k: q @ _t(k) / q.shape[-1]),
        ("q·k multiplied by √d instead of divided", lambda q, k: q @ _t(k) * np.sqrt(q.shape[-1])),
        ("keys times queries: the scores transposed", lambda q, k: _t(attention_scores(q, k))),
        (
            "q·k divided by √T, the number of positions, instead of √d",
            lambda q, k: q @ _t(k) / np.sqrt(q.shape[-2]),
        ),
        (
            "d taken as q.shape[1], which is the size of a query only for a 2-D q (q.shape[-1] always is)",
            lambda q, k: q @ _t(k) / np.sqrt(q.shape[1]),
        ),
        (
            "// (floor division) in place of /: q·k divided by √d, then rounded down",
            lambda q, k: q @ _t(k) // np.sqrt(q.shape[-1]),
        ),
    ],
    "causal_mask": [
        (
            "the upper triangle (j >= i) instead of the lower",
            lambda t: np.triu(np.ones((t, t), dtype=bool)),
        ),
        (
            "the diagonal hidden: a position may not look at itself",
            lambda t: np.tril(np.ones((t, t), dtype=bool), -1),
        ),
        ("True where j > i: the mask inverted", lambda t: ~np.tril(np.ones((t, t), dtype=bool))),
    ],
    "apply_causal_mask": [
        ("masked entries set to 0 instead of -inf", lambda s: _mask_with(s, np.tril, 0.0)),
        (
            "the diagonal hidden: a position may not look at itself",
            lambda s: _mask_with(s, lambda m: np.tril(m, -1), -np.inf),
        ),
        (
            "the wrong triangle hidden (j < i instead of j > i)",
            lambda s: _mask_with(s, np.triu, -np.inf),
        ),
        (
            "masked entries set to a large negative number instead of -inf",
            lambda s: _mask_with(s, np.tril, -1e9),
        ),
        (
            "np.where's two choices swapped: -inf where a position may look and the score where it may not",
            lambda s: np.where(causal_mask(s.shape[-1]), -np.inf, s),
        ),
    ],
    "softmax": [
        ("a softmax along the first axis instead of the last", lambda x: _softmax_over(x, 0)),
        (
            "a softmax along the second-to-last axis",
            lambda x: _softmax_over(x, -2) if x.ndim > 1 else None,
        ),
        ("a softmax over the whole array instead of each row", lambda x: _softmax_over(x, None)),
        (
            "exp without subtracting each row's maximum first (it overflows past 709)",
            _softmax_unshifted,
        ),
        (
            "one maximum for the whole array subtracted instead of each row's own",
            lambda x: _softmax_unshifted(x - np.max(x)),
        ),
        (
            "exp(max − x) in place of exp(x − max): the shift subtracted the wrong way round",
            lambda x: _softmax_unshifted(np.max(x, axis=-1, keepdims=True) - x),
        ),
    ],
    "attention_head": [
        (
            "keys made with the query weights (x @ w_q instead of x @ w_k)",
            lambda x, wq, wk, wv: _head_with(x, wq, wk, wv, keys=wq),
        ),
        ("no causal mask", lambda x, wq, wk, wv: _head_with(x, wq, wk, wv, mask=False)),
        ("scores without the 1/√d", lambda x, wq, wk, wv: _head_with(x, wq, wk, wv, scale=False)),
        (
            "the values multiplied by the shares transposed",
            lambda x, wq, wk, wv: (
                _t(attention_head(x, wq, wk, wv)[1]) @ (x @ wv),
                attention_head(x, wq, wk, wv)[1],
            ),
        ),
    ],
    "multi_head_attention": [
        (
            "the heads joined in reverse order",
            lambda x, heads, w_o: (
                np.concatenate([attention_head(x, *h)[0] for h in heads[::-1]], axis=-1) @ w_o
            ),
        ),
    ],
    "softmax_backward": [
        ("shares times d_shares, without subtracting the row's weighted sum", lambda s, ds: s * ds),
        ("the gradient with the wrong sign", lambda s, ds: -softmax_backward(s, ds)),
        ("d_shares passed straight through", lambda s, ds: ds),
        (
            "the weighted sum taken along the wrong axis",
            lambda s, ds: s * (ds - np.sum(ds * s, axis=0, keepdims=True)),
        ),
    ],
    "attention_head_backward": [
        (
            "the gradient through the scores without the 1/√d",
            lambda *a: _head_backward_with(*a, scale=False),
        ),
        (
            "the path through the scores (queries and keys) left out",
            lambda *a: _head_backward_with(*a, scores_path=False),
        ),
        ("d_x with only the value path", lambda *a: _head_backward_with(*a, x_paths="v")),
        ("d_x missing the key path", lambda *a: _head_backward_with(*a, x_paths="qv")),
        ("d_x missing the query path", lambda *a: _head_backward_with(*a, x_paths="kv")),
    ],
}


def _matches(got, wrong) -> bool:
    """True when got equals a wrong output of the same shape."""
    if wrong is None or type(got) is not np.ndarray:
        return False
    wrong = np.asarray(wrong)
    if wrong.shape != got.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.allclose(got, wrong, rtol=1e-6, atol=1e-9, equal_nan=True))


RIGHT = {  # what each function should give, for the same outputs as its mistakes
    "attention_scores": attention_scores,
    "causal_mask": causal_mask,
    "apply_causal_mask": apply_causal_mask,
    "softmax": softmax,
    "attention_head": attention_head,
    "multi_head_attention": lambda x, heads, w_o: multi_head_attention(x, heads, w_o)[0],
    "softmax_backward": softmax_backward,
    "attention_head_backward": attention_head_backward,
}


def _output(function, args: tuple, part: int | None):
    """function(*args), or its part-th output; None when it does not apply to these inputs."""
    try:
        with np.errstate(all="ignore"):
            value = function(*args)
    except Exception:  # a variant that does not apply to this input's shape
        return None
    return value[part] if part is not None and value is not None else value


def diagnose(
    key: str, args: tuple, got, part: int | None = None, submission=None, reference=()
) -> tuple[str, ...]:
    """The names of the known mistakes whose own code, on args, gives got, in MISTAKES' order.

    A mistake that gives the right answer on these inputs (a softmax along the first axis of a
    1-D row, say) is left out: the diagnosis must be true of the input the message shows. With the
    submission, the student's function also runs once per check on a general input (PROBES), where
    the known mistakes differ from each other and from the right answer: a mistake whose code does not
    give the student's output there as well is left out (on a 1×1 input most scalings look alike).
    The harness names those left that matched every failure of the check (grader.check.checks.seen).
    """
    found = _matching(key, args, got, part)
    if found and submission is not None and SEEN.first((key, part)):
        probe = PROBES[key]()
        value = _quietly(submission, MODULE_OF[key], key, probe, reference)
        there = set(_matching(key, probe, _picked(key, value, part), part))
        found = tuple(name for name in found if name in there)
    return found


def _quietly(submission, module: str, function: str, args: tuple, reference):
    """The student's function's value on args, or None when the call fails; the check's failing example stays its own.

    (Its last call, for `grader try`, and what it printed there are kept.)
    """
    last, printed = submission.last, len(submission.printed.example)
    try:
        return submission.call(module, function, *args, reference=reference).value
    except (CheckFailed, Halt):
        return None
    finally:
        submission.last = last
        del submission.printed.example[printed:]


def _matching(key: str, args: tuple, got, part: int | None) -> tuple[str, ...]:
    """The known mistakes whose output on args equals got and differs from the right one."""
    right = _output(RIGHT[key], args, part)
    found = []
    for name, wrong in MISTAKES.get(key, ()):
        value = _output(wrong, args, part)
        if _matches(got, value) and not _matches(np.asarray(right), value):
            found.append(name)
    return tuple(found)


def _picked(key: str, value, part: int | None):
    """The output a diagnosis compares, from the whole of what the student's function returned (None if it has no such part)."""
    if part is None and key != "multi_head_attention":
        return value
    at = 0 if part is None else part
    return value[at] if isinstance(value, (tuple, list)) and len(value) > at else None


def _probe(seed: int, *shapes, bound: float = 2.0) -> list[np.ndarray]:
    """Arrays of these shapes, values in [-bound, bound], the same on every run."""
    rng = np.random.default_rng([20250601, seed])
    return [rng.uniform(-bound, bound, shape) for shape in shapes]


def _head_probe() -> tuple:
    """x (2, 3, 4, 3) and a head's three (3, 2) weights."""
    return tuple(_probe(3, (2, 3, 4, 3), (3, 2), (3, 2), (3, 2)))


PROBES = {  # a general input per function: every size distinct (T, S, d, a batch axis), values far from whole numbers
    "attention_scores": lambda: tuple(_probe(1, (2, 5, 4, 3), (2, 5, 6, 3), bound=3.0)),
    "causal_mask": lambda: (5,),
    "apply_causal_mask": lambda: tuple(_probe(2, (2, 3, 4, 4))),
    "softmax": lambda: (
        np.where(
            np.triu(np.ones((4, 5), bool), 2), -np.inf, _probe(4, (2, 3, 4, 5), bound=800.0)[0]
        ),
    ),
    "attention_head": _head_probe,
    "multi_head_attention": lambda: (
        _head_probe()[0],
        [_head_probe()[1:], tuple(_probe(5, (3, 2), (3, 2), (3, 2)))],
        _probe(6, (4, 3))[0],
    ),
    "softmax_backward": lambda: (
        softmax(np.where(np.triu(np.ones((4, 4), bool), 1), -np.inf, _probe(7, (2, 3, 4, 4))[0])),
        _probe(8, (2, 3, 4, 4))[0],
    ),
    "attention_head_backward": lambda: (_probe(9, (2, 3, 4, 2))[0], *_head_probe()),
}
