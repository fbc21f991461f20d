"""How `grader try` judges a call: with the checks' own comparisons, tolerances and dtype rule (grader.check.checks.harness).

A check calls a function many times in one process, so a result kept from an earlier call (a
mutable default, a global, a cache) shows: try calls it once first, quietly, on another input
(other_input), then on the input it shows, and judges that second call.
"""

import math
from dataclasses import dataclass

import numpy as np

from grader.check.checks.harness import (
    FORWARD,
    GRADIENT,
    CheckFailed,
    expect_array,
    expect_close,
    fail,
)
from grader.check.checks.unchanged import expect_unchanged
from grader.sandbox.worker.codec import Batches, ToyModel

# judged with the gradients' tolerance, as their checks do
BACKWARD = {"softmax_backward", "attention_head_backward"}
# how many of its first arguments a function changes by design (params; model and batches)
CHANGED = {"sgd_step": 1, "train": 2}


def tolerance_for(function: str, kept: dict | None = None) -> dict:
    """The tolerance of the check that kept this input (when it said), else the one its checks use for this function."""
    said = {key: kept.get(key) for key in ("rtol", "atol")} if kept else {}
    if (
        all(
            isinstance(value, float) and math.isfinite(value) and value >= 0
            for value in said.values()
        )
        and said
    ):
        return said
    return dict(GRADIENT if function in BACKWARD else FORWARD)


@dataclass
class Call:
    """One call try made: the function, its argument names, the grader's copy of the arguments made before the call,
    what it returned (or, for sgd_step, the params it left) and the arguments as the call left them."""

    function: str
    names: tuple
    args: tuple
    got: object
    after: tuple


def problems(call: Call, want, tolerance: dict) -> list[str]:
    """What the checks would say is wrong with this call, each as the check words it (the values shown apart): [] when right."""
    inputs = dict(zip(call.names, call.args))
    what = "params" if call.function == "sgd_step" else "your result"
    found = []
    for judge in (
        lambda: compare(call.got, want, tolerance, inputs, what),
        lambda: unchanged(call),
    ):
        try:
            judge()
        except CheckFailed as failed:
            found.append(without_values(str(failed), [*call.names, *(failed.inputs or {})]))
    return found


def compare(got, want, tolerance: dict, inputs: dict, what: str) -> None:
    """Fail as a check would unless got is want: containers item by item, arrays by the checks' strict rules."""
    if isinstance(want, (dict, tuple, list)):
        compare_items(got, want, tolerance, inputs, what)
    elif isinstance(want, np.ndarray):
        compare_array(got, want, tolerance, inputs, what)
    else:
        compare_number(got, want, tolerance, inputs, what)


def compare_items(got, want, tolerance: dict, inputs: dict, what: str) -> None:
    """A dict key by key (the same keys in the same order), a tuple or list item by item (the same length)."""
    if isinstance(want, dict):
        if not isinstance(got, dict) or list(got) != list(want):
            fail(
                f"{what} should be a dict with the keys {list(want)}, but it is {_kind(got)}.",
                inputs,
                want,
                got,
            )
        pairs = [(f"{what}[{key!r}]", got[key], want[key]) for key in want]
    else:
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            fail(f"{what} should be {_kind(want)}, but it is {_kind(got)}.", inputs, want, got)
        pairs = [(f"{what}[{n}]", mine, theirs) for n, (mine, theirs) in enumerate(zip(got, want))]
    for named, mine, theirs in pairs:
        compare(mine, theirs, tolerance, inputs, named)


def compare_array(got, want: np.ndarray, tolerance: dict, inputs: dict, what: str) -> None:
    """A bool array exactly, a float one by expect_close: a plain ndarray, the shape, no NaN, no narrower dtype, the tolerance."""
    if want.dtype != np.bool_:
        expect_close(got, want, what, inputs, tolerance)
        return
    expect_array(got, want.shape, what, inputs, dtype_kind="b")
    if not np.array_equal(got, want):
        fail(f"{what} is not what it should be (exactly).", inputs, want, got)


def compare_number(got, want, tolerance: dict, inputs: dict, what: str) -> None:
    """An int exactly (of the same type), a float within the tolerance, anything else by ==."""
    if isinstance(want, float):
        if isinstance(got, (bool, np.bool_)) or not isinstance(
            got, (int, float, np.integer, np.floating)
        ):
            fail(f"{what} should be a float, but it is {_kind(got)}.", inputs)
        if not np.isclose(float(got), want, equal_nan=False, **tolerance):
            fail(
                f"{what} should be {want!r} (tolerance rtol={tolerance['rtol']:g}, atol={tolerance['atol']:g}), but it is {got!r}.",
                inputs,
            )
    elif type(got) is not type(want) or got != want:
        fail(f"{what} should be {want!r}, but it is {got!r}.", inputs)


def unchanged(call: Call) -> None:
    """Fail as the checks do when the call changed an input it must leave as it was."""
    kept = CHANGED.get(call.function, 0)
    before = {name: arg for name, arg in list(zip(call.names, call.args))[kept:]}
    expect_unchanged(before, call.after[kept:], call.function)


def without_values(message: str, names) -> str:
    """A check's message without the lines that show the values (an input, expected, got), which try shows above it already."""
    labels = tuple(
        f"  {label}" for label in (*(f"{name} = " for name in names), "expected: ", "got:      ")
    )
    kept, skipping = [], False
    for line in message.splitlines():
        # a value's first line, or one continuing it
        skipping = line.startswith(labels) or skipping and line.startswith("    ")
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def _kind(value) -> str:
    """A value's kind in words: "a tuple of 3", "a dict", "None"."""
    if value is None:
        return "None"
    size = f" of {len(value)}" if isinstance(value, (tuple, list, dict)) else ""
    return f"a {type(value).__name__}{size}"


def other_input(value):
    """An input like this one, of the same shapes and kinds and other numbers: for the quiet first call."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return (value * 0.5 + 0.25).astype(value.dtype)  # -inf stays -inf
    if isinstance(value, bool) or not isinstance(
        value, (int, dict, list, tuple, ToyModel, Batches)
    ):
        return value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, dict):
        return {key: other_input(item) for key, item in value.items()}
    if isinstance(value, ToyModel):
        return ToyModel(other_input(value.params))
    if isinstance(value, Batches):
        return Batches([other_input(pair) for pair in value.pairs] * 2)  # enough for one more step
    return type(value)(other_input(item) for item in value)
