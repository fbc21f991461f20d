"""Worked examples: fixed inputs at several sizes, and what each function should give for them.

In the full kit the expected outputs are the reference's, computed when a check first asks; the
student's kit has them stored in examples.npz, which `grader release` writes with the same code
(inputs included, so no random generator has to agree across numpy versions). Both kits check
the same values, as CS336's snapshot tests do. Sizes go from a few numbers to the comparison's head.
"""

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader import kit
from grader.check.checks import scale
from grader.check.checks.harness import FORWARD, GRADIENT, expect_array, fail, reference_for, show
from grader.check.checks.where import relation, scaled_shares, which_wrong

STORED = Path(__file__).resolve().parent / "examples.npz"
SEED = 20240605
COMPARISON_VOCAB = 40  # the comparison's alphabet and its boundary token: the width of its logits
INPUT_LINES = 8  # inputs printing more lines than this are all named by shape: the message stays within about 25 lines
FLOAT32 = 1e-4  # rtol, and atol as a share of the largest expected value: float32 results were within 4e-6 of float64's


@dataclass(frozen=True)
class Size:
    """The shapes of one size: batch axes, positions T, input width C, query size d, value size d_v."""

    name: str
    batch: tuple
    t: int
    c: int
    d: int
    d_v: int
    dtype: type = np.float64


SIZES = (
    Size("tiny", (), 3, 2, 2, 2),
    Size("batched", (2, 3), 4, 3, 2, 3),
    Size("wide", (2,), 9, 8, 4, 5),
    # The comparison's head (grader/compare/models.py): input width 32, query size 32, value size 128, float32;
    # a batch of its 16 replies cut to 12 positions, and one reply at its full length of 141 positions.
    Size("comparison batch", (16,), 12, 32, 32, 128, np.float32),
    Size("comparison reply", (1,), 141, 32, 32, 128, np.float32),
)
OUTPUTS = {  # each function's outputs, by name, in the order it returns them
    "scores.attention_scores": ("scores",),
    "masking.causal_mask": ("mask",),
    "masking.apply_causal_mask": ("masked scores",),
    "softmax.softmax": ("shares",),
    "heads.attention_head": ("out", "shares"),
    "heads.multi_head_attention": ("out", "shares of head 0", "shares of head 1"),
    "training.softmax_backward": ("d_x",),
    "training.attention_head_backward": ("d_x", "d_w_q", "d_w_k", "d_w_v"),
}
ARGS = {  # each function's arguments, from an example's named inputs
    "scores.attention_scores": lambda a: (a["q"], a["k"]),
    "masking.causal_mask": lambda a: (int(a["T"]),),
    "masking.apply_causal_mask": lambda a: (a["scores"],),
    "softmax.softmax": lambda a: (a["x"],),
    "heads.attention_head": lambda a: (a["x"], a["w_q"], a["w_k"], a["w_v"]),
    "heads.multi_head_attention": lambda a: (
        a["x"],
        [(a[f"w_q{h}"], a[f"w_k{h}"], a[f"w_v{h}"]) for h in range(2)],
        a["w_o"],
    ),
    "training.softmax_backward": lambda a: (a["shares"], a["d_shares"]),
    "training.attention_head_backward": lambda a: (
        a["d_out"],
        a["x"],
        a["w_q"],
        a["w_k"],
        a["w_v"],
    ),
}
COMPARISON_USES = {
    "scores.attention_scores",
    "masking.causal_mask",
    "masking.apply_causal_mask",
    "softmax.softmax",
    "heads.attention_head",
    "training.softmax_backward",
    "training.attention_head_backward",
}


@dataclass(frozen=True)
class Example:
    """One function on one input: its key in examples.npz ("tiny/softmax.softmax/masked"), and its named inputs."""

    key: str
    size: Size
    function: str
    inputs: dict

    def args(self) -> tuple:
        """The function's arguments."""
        return ARGS[self.function](self.inputs)

    def tolerance(self, expected: np.ndarray) -> dict:
        """How close a value must be: float32 sizes relative to the largest value, gradients looser than forward values."""
        if self.size.dtype == np.float32:
            finite = np.abs(expected[np.isfinite(expected)])
            return {"rtol": FLOAT32, "atol": FLOAT32 * float(finite.max(initial=1.0))}
        return GRADIENT if self.function.startswith("training.") else FORWARD


def made_inputs(size: Size) -> dict[str, dict]:
    """Every example's named inputs at this size, from fixed seeds: {"function/label": {name: value}}."""
    rng = np.random.default_rng([SEED, SIZES.index(size)])
    b, t = size.batch, size.t

    def fill(shape, bound):
        return rng.uniform(-bound, bound, shape).astype(size.dtype)

    def weights():
        return {
            "w_q": fill((size.c, size.d), 1.0),
            "w_k": fill((size.c, size.d), 1.0),
            "w_v": fill((size.c, size.d_v), 1.0),
        }

    above = scale.above_diagonal(t)  # where a causal row has -inf or a zero share
    masked = np.where(above, -np.inf, fill(b + (t, t), 30.0)).astype(size.dtype)
    masked[..., -1, :] += size.dtype(1e3)  # a row far from 0: exp overflows unless shifted
    share_weights = np.where(above, 0.0, rng.random(b + (t, t)) ** 3 + 1e-3)
    # a softmax's output, rows sum to 1
    shares = (share_weights / share_weights.sum(axis=-1, keepdims=True)).astype(size.dtype)
    x, head = fill(b + (t, size.c), 2.0), weights()
    many = {f"{name}{h}": w for h in range(2) for name, w in weights().items()}
    found = {
        "scores.attention_scores/q and k": {
            "q": fill(b + (t, size.d), 2.0),
            "k": fill(b + (t + 2, size.d), 2.0),
        },
        "masking.causal_mask/T": {"T": np.array(t)},
        "masking.apply_causal_mask/scores": {"scores": fill(b + (t, t), 5.0)},
        "softmax.softmax/masked scores": {"x": masked},
        "softmax.softmax/logits": {"x": fill(b + (t, COMPARISON_VOCAB), 8.0)},
        "heads.attention_head/x": {"x": x, **head},
        "heads.multi_head_attention/x": {"x": x, **many, "w_o": fill((2 * size.d_v, 3), 1.0)},
        "training.softmax_backward/shares": {"shares": shares, "d_shares": fill(b + (t, t), 2.0)},
        "training.attention_head_backward/x": {
            "d_out": fill(b + (t, size.d_v), 2.0),
            "x": x,
            **head,
        },
    }
    if size.dtype == np.float32:
        found = {
            key: value for key, value in found.items() if key.partition("/")[0] in COMPARISON_USES
        }
    return {f"{size.name}/{key}": value for key, value in found.items()}


def flat(value) -> list:
    """A function's outputs as a flat list of values: (out, [s0, s1]) -> [out, s0, s1]."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flat(item)]
    return [value]


def compute(reference) -> dict[str, np.ndarray]:
    """Every example's inputs and outputs as examples.npz holds them; reference(name) gives the reference function."""
    stored = {}
    for size in SIZES:
        for key, inputs in made_inputs(size).items():
            function = key.split("/")[1]
            stored |= {f"{key}/in/{name}": np.asarray(value) for name, value in inputs.items()}
            outputs = flat(reference(function)(*ARGS[function](inputs)))
            stored |= {f"{key}/out/{n}": np.asarray(value) for n, value in enumerate(outputs)}
    return stored


def write(path: Path, reference) -> int:
    """Write examples.npz from the reference; how many arrays it holds."""
    stored = compute(reference)
    with open(path, "wb") as file:
        np.savez_compressed(file, **stored)
    return len(stored)


def from_reference(function: str):
    """The reference function of a qualified name (the full kit only)."""
    return reference_for(frozenset([function]))[function]


@functools.cache
def _values() -> dict[str, np.ndarray]:
    """Every input and output: stored in the student's kit, from the reference in the full kit."""
    if kit.is_student_kit():
        with np.load(STORED, allow_pickle=False) as stored:
            return {key: stored[key] for key in stored.files}
    return compute(from_reference)


def examples(function: str) -> list[Example]:
    """The worked examples of one function, smallest size first."""
    values, found = _values(), {}
    for key, value in values.items():
        example, _, rest = key.rpartition("/in/") if "/in/" in key else ("", "", "")
        if example and example.split("/")[1] == function:
            found.setdefault(example, {})[rest] = value
    by_name = {size.name: size for size in SIZES}
    order = [size.name for size in SIZES]
    keys = sorted(found, key=lambda k: (order.index(k.split("/")[0]), k))
    return [Example(key, by_name[key.split("/")[0]], function, found[key]) for key in keys]


def expected(example: Example) -> list[np.ndarray]:
    """The outputs the example should give, in the order the function returns them."""
    values = _values()
    return [values[f"{example.key}/out/{n}"] for n in range(len(OUTPUTS[example.function]))]


class Brief:
    """An input in a failure message: shown in full when small, else by its shape and dtype."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"an array of shape {self.value.shape}, dtype {self.value.dtype}"


def shown_inputs(example: Example) -> dict:
    """The example's inputs as a failure message shows them: in full while they are small, else by shape (`grader try` has them all)."""
    shown = {
        name: Brief(v) if isinstance(v, np.ndarray) and v.size > 64 else v
        for name, v in example.inputs.items()
    }
    if sum(show(v).count("\n") + 1 for v in shown.values()) > INPUT_LINES:
        shown = {
            name: Brief(v) if isinstance(v, np.ndarray) and v.ndim else v
            for name, v in example.inputs.items()
        }
    return shown


def expect_example(got, example: Example, exact: bool = False):
    """Fail unless the function's outputs on this example are the expected ones; exact for the mask."""
    function, want = example.function.partition(".")[2], expected(example)
    where, inputs = f"{function} on the worked example {example.size.name!r}", shown_inputs(example)
    parts = flat(got) if len(want) > 1 else [got]
    if len(want) > 1 and (not isinstance(got, (tuple, list)) or len(parts) != len(want)):
        fail(
            f"{where} should return {len(want)} things ({', '.join(OUTPUTS[example.function])}).",
            inputs,
            got=got,
        )
    for name, mine, theirs in zip(OUTPUTS[example.function], parts, want):
        kind = "b" if theirs.dtype == np.bool_ else "f"
        expect_array(mine, theirs.shape, f"{name}, from {where},", inputs, dtype_kind=kind)
        if not agrees(mine, theirs, example, exact):
            exactly = exact or kind == "b"
            how = (
                "exactly"
                if exactly
                else "within rtol={rtol:g}, atol={atol:.2g}".format(**example.tolerance(theirs))
            )
            lines = [
                f"{name}, from {where}, should equal the worked example's {how} (made from the reference when this kit was written)."
            ]
            if example.size.dtype == np.float32:
                lines.append("  This example is float32, as the comparison's arrays are.")
            notes = [relation(mine, theirs), *parts_notes(example, parts, want)]
            fail(
                "\n".join(lines),
                inputs,
                expected=theirs,
                got=mine,
                where="\n".join(n for n in notes if n) or None,
            )


def agrees(mine, theirs: np.ndarray, example: Example, exact: bool = False) -> bool:
    """Whether one output is the expected one: its shape, and its values exactly (a mask) or within the example's tolerance."""
    if type(mine) is not np.ndarray or mine.shape != theirs.shape:
        return False
    if exact or theirs.dtype == np.bool_:
        return bool(np.array_equal(mine, theirs))
    with np.errstate(all="ignore"):
        return bool(np.allclose(mine, theirs, **example.tolerance(theirs)))


def parts_notes(example: Example, parts: list, want: list) -> list[str | None]:
    """For a function of several outputs: which are wrong and which right, and whether wrong shares are only scaled wrong."""
    names = OUTPUTS[example.function]
    wrong = [
        name for name, mine, theirs in zip(names, parts, want) if not agrees(mine, theirs, example)
    ]
    kind = "gradients" if example.function == "training.attention_head_backward" else "outputs"
    shares = (
        scaled_shares(
            parts[n], want[n], None if example.function == "softmax.softmax" else example.size.d
        )
        for n, name in enumerate(names)
        if name.startswith("shares") and name in wrong
    )
    return [which_wrong(list(names), wrong, kind), next((note for note in shares if note), None)]
