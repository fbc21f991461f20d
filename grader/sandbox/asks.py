"""What a stand-in may ask the reference: each function's contract and the cost of its answer.

The contract is the one the stubs' and solutions' docstrings state: numpy floating arrays (float64,
and float32 at the comparison's sizes) with any number of leading batch axes, the shapes each
function names, ints for sizes.

An ask is checked on its outline (types, dtypes and shapes, no array read) before anything runs:
float arrays only (no complex, object or str), the number of dimensions and the shapes that agree,
no empty axis where the contract has none, and a cost (the numbers given, and those the answer
would hold, broadcasting and int sizes counted) within a budget: a few times the largest honest
call of any check, the comparison's sizes in grader.check.checks.scale.
"""

import math
import numbers
from typing import Any

import numpy as np

from grader.sandbox.errors import AskRefused
from grader.sandbox.worker.codec import ArrayHead

# the comparison's batch and positions (grader.check.checks.scale): a worked example's scores
BATCH, T = (16, 141)
# the model's
PARAM_NUMBERS = (
    40 * 16 + 128 * 128 + 128 + 128 * 40 + 40 + 40 * 32 + 160 * 32 + 32 * 32 * 2 + 32 * 128
)
MARGIN = 4  # times the largest honest call
BUDGET = MARGIN * max(BATCH * T * T, PARAM_NUMBERS)  # numbers an ask may hold or be answered with


def check(name: str, args) -> None:
    """Raise AskRefused unless args (an outline: ArrayHead for each array) fit name's contract and budget."""
    contract = CONTRACTS.get(name)
    if contract is None:
        raise AskRefused(f"there is no reference {name} to ask")
    function = name.partition(".")[2]
    parameters = contract.__code__.co_varnames[: contract.__code__.co_argcount]
    if type(args) is not tuple or len(args) != len(parameters):
        raise AskRefused(f"{function} takes {len(parameters)} arguments ({', '.join(parameters)})")
    cost = contract(*args)
    if cost > BUDGET:
        raise AskRefused(
            f"{function} was called on arguments that hold or would give {_count(cost)} numbers; the grader's reference "
            f"computes at most {BUDGET:,}, several times the largest input a check uses. Call it on the input you were given."
        )


def _count(n: int) -> str:
    """A count of numbers in words, however large (Python will not write an int of thousands of digits)."""
    return f"{n:,}" if n < 10**15 else f"about 10^{int(n.bit_length() * math.log10(2))}"


def _finite(number: numbers.Real) -> bool:
    """Whether a number is neither nan nor infinite, an int past any float included (math.isfinite raises on it)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def _array(value, what: str, ndim: int = 1) -> ArrayHead:
    """The outline of a float array of at least ndim dimensions, or AskRefused."""
    if type(value) is not ArrayHead:
        raise AskRefused(f"{what} must be a numpy array of floats, not {_kind(value)}")
    if value.dtype.kind != "f":
        raise AskRefused(
            f"{what} must be a floating-point array, as the contract says, not {value.dtype}"
        )
    if len(value.shape) < ndim:
        raise AskRefused(f"{what} must have at least {ndim} dimensions, not shape {value.shape}")
    return value


def _kind(value) -> str:
    """A short name for a value's type, as the student wrote it."""
    if type(value) is ArrayHead:
        return f"an array of {value.dtype}"
    return getattr(value, "type_name", None) or type(value).__name__


def _nonempty(shape: tuple, axes: int, what: str) -> None:
    """AskRefused when one of the last `axes` axes is empty."""
    if 0 in shape[len(shape) - axes :]:
        raise AskRefused(f"{what} has an empty axis where the contract has none (shape {shape})")


def _broadcast(*shapes: tuple, what: str) -> tuple:
    """The shapes' broadcast, or AskRefused."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise AskRefused(
            f"{what}: shapes {' and '.join(map(str, shapes))} do not broadcast"
        ) from None


def attention_scores(q, k) -> int:
    q, k = _array(q, "q", 2), _array(k, "k", 2)
    _nonempty(q.shape, 2, "q")
    _nonempty(k.shape, 2, "k")
    if q.shape[-1] != k.shape[-1]:
        raise AskRefused(f"q and k must end in the same width d, not {q.shape} and {k.shape}")
    batch = _broadcast(q.shape[:-2], k.shape[:-2], what="the batch axes of q and k")
    return max(q.size + k.size, math.prod(batch) * q.shape[-2] * k.shape[-2])


def causal_mask(T) -> int:
    if not isinstance(T, numbers.Integral) or isinstance(T, bool | np.bool_):
        raise AskRefused(f"T must be an int, not {_kind(T)}")
    if T < 1:
        raise AskRefused(f"T must be at least 1, not {T}")
    return int(T) ** 2


def apply_causal_mask(scores) -> int:
    scores = _array(scores, "scores", 2)
    _nonempty(scores.shape, 2, "scores")
    if scores.shape[-1] != scores.shape[-2]:
        raise AskRefused(
            f"scores must be square in its last two axes (..., T, T), not {scores.shape}"
        )
    return scores.size


def softmax(x) -> int:
    x = _array(x, "x")
    _nonempty(x.shape, 1, "x")
    return x.size


def softmax_backward(shares, d_shares) -> int:
    shares, d_shares = _array(shares, "shares"), _array(d_shares, "d_shares")
    _nonempty(shares.shape, 1, "shares")
    if shares.shape[-1:] != d_shares.shape[-1:]:
        raise AskRefused(
            f"shares and d_shares must end in the same axis, not {shares.shape} and {d_shares.shape}"
        )
    return math.prod(_broadcast(shares.shape, d_shares.shape, what="shares and d_shares"))


def sgd_step(params, grads, lr) -> int:
    if type(params) is not dict or type(grads) is not dict:
        raise AskRefused(
            f"params and grads must be dicts of arrays, not {_kind(params)} and {_kind(grads)}"
        )
    if set(params) != set(grads):
        raise AskRefused(
            f"params and grads must have the same names, not {sorted(map(str, params))} and {sorted(map(str, grads))}"
        )
    if not isinstance(lr, numbers.Real) or isinstance(lr, bool | np.bool_):
        raise AskRefused(f"lr must be a finite float, not {_kind(lr)}")
    if not _finite(lr):
        raise AskRefused(
            "lr must be a finite float: not nan, not inf, not a number past a float's range"
        )
    cost = 0
    for name, param in params.items():
        param, grad = (
            _array(param, f"params[{name!r}]", 0),
            _array(grads[name], f"grads[{name!r}]", 0),
        )
        if (
            _broadcast(param.shape, grad.shape, what=f"params[{name!r}] and grads[{name!r}]")
            != param.shape
        ):
            raise AskRefused(
                f"grads[{name!r}] must be shaped like params[{name!r}], not {grad.shape} for {param.shape}"
            )
        cost += param.size + grad.size
    return cost


def attention_head(x, w_q, w_k, w_v) -> int:
    x = _array(x, "x", 2)
    _nonempty(x.shape, 2, "x")
    weights = {"w_q": w_q, "w_k": w_k, "w_v": w_v}
    for name, weight in weights.items():
        weights[name] = weight = _array(weight, name, 2)
        if len(weight.shape) != 2 or weight.shape[0] != x.shape[-1] or 0 in weight.shape:
            raise AskRefused(
                f"{name} must be (C, width) with C = {x.shape[-1]}, the width of x's rows, not {weight.shape}"
            )
    if weights["w_q"].shape[1] != weights["w_k"].shape[1]:
        raise AskRefused(
            f"w_q and w_k must give the same width d, not {weights['w_q'].shape} and {weights['w_k'].shape}"
        )
    rows = math.prod(x.shape[:-1])  # positions in all of x's batch
    widths = sum(weight.shape[1] for weight in weights.values())
    return max(x.size + sum(w.size for w in weights.values()), rows * (x.shape[-2] + widths))


CONTRACTS: dict[str, Any] = {
    "scores.attention_scores": attention_scores,
    "masking.causal_mask": causal_mask,
    "masking.apply_causal_mask": apply_causal_mask,
    "softmax.softmax": softmax,
    "heads.attention_head": attention_head,
    "training.softmax_backward": softmax_backward,
    "training.sgd_step": sgd_step,
}
