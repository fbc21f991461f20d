"""Where a wrong result is wrong: its largest difference, a narrower dtype, the expected one transposed, a constant multiple,
rounded down, or which columns of the heads' output.

Each says something true of the arrays the message shows, in both kits (no reference needed).
"""

from typing import Any

import numpy as np

from grader.check.checks.seen import SEEN

CLOSE: dict[str, Any] = {"rtol": 1e-6, "atol": 1e-9}


def relation(got, expected) -> str | None:
    """A note when got is expected with its last two axes swapped, or expected times one constant."""
    if (
        not (isinstance(got, np.ndarray) and isinstance(expected, np.ndarray))
        or got.dtype.kind not in "fiu"
        or not got.size
    ):
        return None
    with np.errstate(all="ignore"):
        got, expected = got.astype(float), expected.astype(float)
        flipped = np.swapaxes(expected, -1, -2) if expected.ndim >= 2 else expected
        same = got.shape == expected.shape and np.allclose(got, expected, **CLOSE)
        if (
            expected.ndim >= 2
            and flipped.shape == got.shape
            and not same
            and np.allclose(got, flipped, **CLOSE)
        ):
            return "  Your result is the expected one transposed (its last two axes swapped): look at the order of the arguments in a product."
        if (
            got.shape != expected.shape
            or not np.isfinite(got).all()
            or not np.isfinite(expected).all()
        ):
            return None
        factor = _factor(got, expected)
        if factor is None and _rounded_down(got, expected):
            return "  Your result is the expected one rounded down to a whole number everywhere: look for // (floor division) or a rounding."
    if factor is None:
        return None
    return f"  Your result is the expected one times {named(factor)} everywhere: a constant factor, so look at the scaling."


def _rounded_down(got: np.ndarray, expected: np.ndarray) -> bool:
    """Whether got is floor(expected) everywhere, and that shows: at least two entries of expected are not whole numbers."""
    return int(np.sum(expected != np.floor(expected))) >= 2 and bool(
        np.array_equal(got, np.floor(expected))
    )


def named(factor: float) -> str:
    """A factor with the number it is, where it is a simple one: "0.57735 (= 1/√3)", "0.816497 (= √2/√3)"."""
    roots = {str(n): float(n) for n in range(2, 513)} | {
        f"√{n}": np.sqrt(n) for n in range(2, 513) if int(np.sqrt(n)) ** 2 != n
    }
    found = next(
        (name for name, value in roots.items() if np.isclose(factor, value, rtol=1e-6)), None
    )
    found = found or next(
        (f"1/{name}" for name, value in roots.items() if np.isclose(factor, 1 / value, rtol=1e-6)),
        None,
    )
    ratios = ((a, b) for a in range(2, 65) for b in range(2, 65) if a != b and np.gcd(a, b) == 1)
    found = found or next(
        (f"√{a}/√{b}" for a, b in ratios if np.isclose(factor, np.sqrt(a / b), rtol=1e-6)), None
    )
    return f"{factor:.6g}" + (f" (= {found})" if found else "")


def _factor(got: np.ndarray, expected: np.ndarray, close: dict = CLOSE) -> float | None:
    """The one number c with got == c · expected (c not 1 or 0), else None."""
    big = np.abs(expected) > 1e-12
    if big.sum() < 2 or np.any(np.abs(got[~big]) > 1e-9):
        return None
    ratios = got[big] / expected[big]
    factor = float(np.median(ratios))
    if (
        np.isclose(factor, 1.0, rtol=1e-6)
        or abs(factor) < 1e-12
        or not np.allclose(got, factor * expected, **close)
    ):
        return None
    return factor


def scaled_shares(got, expected, d: int | None) -> str | None:
    """A note when got's shares are the softmax of the right scores times one constant: the scores scaled by another number than √d.

    d: the size of a query, for a head's shares; None for softmax's own, whose scores are its input x.
    """
    if not (
        type(got) is np.ndarray
        and isinstance(expected, np.ndarray)
        and got.shape == expected.shape
        and got.dtype.kind == "f"
    ):
        return None
    seen = expected > 0
    if not np.isfinite(got).all() or ((got > 0) != seen).any():
        return None  # a share given or taken away: not a matter of scale
    with np.errstate(all="ignore"):
        logs = [np.log(np.where(seen, s.astype(float), 1.0)) for s in (got, expected)]
        count = np.maximum(seen.sum(axis=-1, keepdims=True), 1)
        # each row's log-shares
        centred = [
            np.where(seen, v - (v * seen).sum(axis=-1, keepdims=True) / count, 0.0) for v in logs
        ]
        mine, right = centred
        factor = _factor(mine, right, {"rtol": 1e-4, "atol": 1e-6})
    if factor is None:
        return None
    if d is None and np.isclose(factor, -1.0):
        return "  Your shares are the softmax of -x: the sign of every score is flipped before exp."
    if d is None:
        return f"  Your shares are the softmax of x times {named(factor)}: the scores are scaled before exp."
    return (
        f"  Your shares are the softmax of the right scores times {named(factor)}: look at how the scores are scaled "
        f"(q·k/√d, with d the size of a query, here {d})."
    )


def which_wrong(names: list[str], wrong: list[str], kind: str = "outputs") -> str | None:
    """Which of a function's several outputs are wrong and which right: "Of the four gradients, d_x is wrong and ... are right.".

    An output is called right only when it was right on every input the check saw fail: on a small
    input a wrong product can give the right number (one column), and the larger inputs tried first show it.
    """
    if len(names) < 2 or not wrong:
        return None
    ever = SEEN.ever_wrong(" ".join(names), wrong)
    elsewhere, right = (
        [n for n in names if n in ever and n not in wrong],
        [n for n in names if n not in ever],
    )
    count = {2: "two", 3: "three", 4: "four"}.get(len(names), str(len(names)))
    if not right and not elsewhere and len(names) == 2:
        return f"  Both {kind}, {' and '.join(names)}, are wrong."
    said = f"  Of the {count} {kind}, {_listed(wrong)} {'is' if len(wrong) == 1 else 'are'} wrong"
    if elsewhere:
        said += f" here, and {_listed(elsewhere)} {'was' if len(elsewhere) == 1 else 'were'} wrong on another input this check tried"
        return said + (
            f"; {_listed(right)} {'is' if len(right) == 1 else 'are'} right on every input that failed."
            if right
            else "."
        )
    return said + (
        f" and {_listed(right)} {'is' if len(right) == 1 else 'are'} right."
        if right
        else f": all {count}."
    )


def wrong_parts(names, got, expected, tolerance: dict) -> list[str]:
    """The names of the outputs of got that are not plain arrays shaped like and close to expected's."""
    return [
        name
        for name, mine, theirs in zip(names, got, expected)
        if not _close(mine, theirs, tolerance)
    ]


def _close(got, expected: np.ndarray, tolerance: dict) -> bool:
    if type(got) is not np.ndarray or got.shape != expected.shape or got.dtype.kind not in "fiu":
        return False
    with np.errstate(all="ignore"):
        return bool(np.allclose(got, expected, equal_nan=False, **tolerance))


def _listed(names: list[str]) -> str:
    """Names joined with commas, as the messages list them."""
    return ", ".join(names)


def swapped_shape(got_shape: tuple, shape: tuple) -> str | None:
    """A note when a result's shape is the expected one with the last two sizes swapped."""
    if (
        len(shape) >= 2
        and shape[-1] != shape[-2]
        and tuple(got_shape) == tuple(shape[:-2]) + (shape[-1], shape[-2])
    ):
        return "  Its last two sizes are swapped: the result is transposed; look at the order of the arguments in a product."
    return None


def heads_columns(got, outs: list, w_o: np.ndarray) -> str | None:
    """Which columns of multi_head_attention's out are wrong: w_o left out, the heads interleaved, or a block per head."""
    if (
        type(got) is not np.ndarray
        or got.dtype.kind != "f"
        or not np.isfinite(got).all()
        or not outs
    ):
        return None
    joined, d_v, heads = np.concatenate(outs, axis=-1), outs[0].shape[-1], len(outs)
    with np.errstate(all="ignore"):
        if _same(got, joined @ w_o):
            return None
        if _same(got, joined):
            return "  Your out is the heads' outputs joined but never multiplied by w_o: multiply the joined heads by the output matrix."
        interleaved = np.stack(outs, axis=-1).reshape(*joined.shape)  # column j: head j % H
        if heads > 1 and d_v > 1 and _same(got, interleaved @ w_o):
            pattern = "every other column" if heads == 2 else f"every {heads}th column"
            return (
                f"  Before w_o your columns hold the heads interleaved: column j is head j % {heads}'s ({pattern}), "
                f"where each head should fill a block of {d_v} columns side by side (head 0 in columns 0..{d_v - 1}, and so on). "
                "A reshape without moving the head axis first, or np.stack(..., axis=-1), interleaves them."
            )
        if w_o.shape[0] != w_o.shape[1] or got.shape != joined.shape or np.linalg.cond(w_o) > 1e8:
            return None
        mine = got @ np.linalg.inv(w_o)  # what was multiplied by w_o
    wrong = [h for h in range(heads) if not _same(mine[..., h * d_v : (h + 1) * d_v], outs[h])]
    if not wrong or len(wrong) == heads:
        return None
    blocks = ", ".join(f"columns {h * d_v}..{(h + 1) * d_v - 1} (head {h})" for h in wrong)
    return f"  Before w_o, the wrong columns are {blocks}; the other heads' blocks are right."


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and values, to rounding."""
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-5, atol=1e-7))


def float32_digits(got, expected, inputs: dict) -> str | None:
    """A note when a float64 result agrees with the expected one only to float32's 7 digits: float32 somewhere inside."""
    arrays = [getattr(v, "value", v) for v in inputs.values()]
    if not (
        isinstance(got, np.ndarray)
        and isinstance(expected, np.ndarray)
        and got.shape == expected.shape
        and got.size
    ):
        return None
    if got.dtype != np.float64 or not any(
        isinstance(a, np.ndarray) and a.dtype == np.float64 for a in arrays
    ):
        return None
    with np.errstate(all="ignore"):
        finite = np.isfinite(expected) & np.isfinite(got) & (np.abs(expected) > 1e-6)
        if not finite.any() or (np.isfinite(expected) != np.isfinite(got)).any():
            return None
        # against the largest entry
        worst = float(
            np.max(np.abs(got[finite] - expected[finite])) / np.max(np.abs(expected[finite]))
        )
    if (
        not 3e-8 < worst < 1e-6
    ):  # float32's rounding is a few of its steps of 1.2e-7; a shrunk mistake often differs by more
        return None
    return (
        f"  Your result is float64 but agrees with the expected one only to about 7 significant digits (a relative difference of {worst:.2g}), "
        "as float32 does: somewhere your computation runs in float32 (look for .astype or np.float32) although the input is float64."
    )


def widened(got, inputs: dict) -> str | None:
    """A note when got holds a float64 array made from float32 inputs alone: not wrong, but the comparison's float32 head pays for it."""
    arrays = [getattr(v, "value", v) for v in inputs.values()]
    widths = {a.dtype for a in arrays if isinstance(a, np.ndarray) and a.dtype.kind == "f"}
    results = got if isinstance(got, (tuple, list)) else [got]
    if widths != {np.dtype(np.float32)} or not any(
        isinstance(r, np.ndarray) and r.dtype == np.float64 for r in results
    ):
        return None
    return (
        "  Your result is float64 from float32 input: not wrong, but `grader compare` runs its model in float32, and a head "
        "that returns float64 does every product of its forward and backward passes in float64, at twice the memory and "
        "more time (compare says how much). A NumPy float64 scalar does it, such as np.sqrt(d) in q @ k.T / np.sqrt(d): "
        "math.sqrt(d), or a Python float, keeps float32 arrays float32."
    )


def largest_difference(got: np.ndarray, expected: np.ndarray) -> str:
    """Where the entry that differs most is, with both values in full (the arrays above are rounded)."""
    with np.errstate(all="ignore"):
        gap = np.abs(got.astype(float) - expected.astype(float))
        gap = np.where(got == expected, 0.0, np.where(np.isnan(gap), np.inf, gap))
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(gap)), gap.shape))
    where = f" at index {index}" if index else ""
    with np.errstate(all="ignore"):
        # beyond rounding
        apart = gap > CLOSE["atol"] + CLOSE["rtol"] * np.abs(expected.astype(float))
    first = tuple(int(i) for i in np.argwhere(apart)[0]) if apart.any() else index
    also = (
        f" The first entry to differ is at index {first}: expected {str(expected[first])}, got {str(got[first])}."
        if first != index
        else ""
    )
    return f"  The largest difference is{where}: expected {str(expected[index])}, got {str(got[index])} (a difference of {gap[index]:.3g}).{also}"


def narrower(got, inputs: dict, expected=None) -> str | None:
    """A note when got is a float array of fewer digits than the float inputs (float32 from float64, say), or than expected."""
    arrays = [getattr(v, "value", v) for v in inputs.values()]
    widths = [a.dtype for a in arrays if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    which = "the input"
    if (
        not widths and isinstance(expected, np.ndarray) and expected.dtype.kind == "f"
    ):  # inputs of other kinds (train's batches)
        widths, which = [expected.dtype], "the expected result"
    if not (isinstance(got, np.ndarray) and got.dtype.kind == "f" and widths):
        return None
    wide = max(widths, key=lambda d: d.itemsize)
    if got.dtype.itemsize >= wide.itemsize:
        return None
    # float32: 24 bits, about 7 significant digits
    digits = round((np.finfo(got.dtype).nmant + 1) * np.log10(2))
    keep = "the input's dtype" if which == "the input" else str(wide)
    return (
        f"  Your result is {got.dtype}, but {which} is {wide}: {got.dtype} keeps about {digits} significant digits, "
        f"so it differs after those. Keep {keep} (look for .astype or np.{got.dtype})."
    )
