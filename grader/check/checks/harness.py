"""What every check uses: calls into the student's worker and strict comparisons with plain messages."""

import base64
import copy
import importlib
import time

import numpy as np

from grader import kit
from grader.check.checks.printed import Printed
from grader.check.checks.where import float32_digits, relation, swapped_shape
from grader.exercises import BY_NAME
from grader.sandbox.codec import Foreign, encode
from grader.sandbox.errors import StudentError
from grader.sandbox.handle import Outcome

SEED = 20240604  # the fixed Hypothesis seed of every check, printed with every report
BUDGET = 200.0  # seconds for all the checks of one run, within batch's and nbgrader's own limits
FATAL = {"not_started", "timeout", "crashed", "import", "refused", "memory", "grader"}  # later calls would fail the same way
MODULE_WIDE = {"import", "refused"}
EXAMPLE_BYTES = 32 << 10  # the encoded size an example may have to be kept for `grader try` (about 4,000 numbers)
SHOWN_ENTRIES = 400  # a larger array is named by its shape and dtype: its numbers would not help
SHOWN_LINES = 8  # an array printing more lines is summarised, so one failure's message stays short
MESSAGE_LINES = 25  # a failure's message longer than this in full shows every array of several lines by its start
FORWARD = {"rtol": 1e-6, "atol": 1e-9}
GRADIENT = {"rtol": 1e-4, "atol": 1e-7}


class CheckFailed(AssertionError):
    """A check's verdict on the student's code, with the message the student reads.

    expected and inputs: what the check knew the answer should be, on which input, for `grader try`;
    mistake: the known mistake the output matches, named where the diagnosis is made (the reports' field).
    """

    def __init__(self, message: str, expected=None, inputs: dict | None = None, mistake: str = ""):
        super().__init__(message)
        self.expected, self.inputs, self.mistake = expected, inputs or {}, mistake


class Halt(BaseException):
    """The student's code cannot run at all (a stub, a hang, a crash): stop the check, try no more inputs.

    A BaseException, so Hypothesis passes it straight up instead of shrinking an input that does
    not matter.
    """

    def __init__(self, error: StudentError, inputs: dict):
        super().__init__(error.message)
        self.error = error
        self.inputs = inputs


def show(value, brief: bool = False) -> str:
    """A short, readable form of an input or output for a failure message; brief: an array of several lines by its start."""
    if isinstance(value, np.ndarray) and value.size > SHOWN_ENTRIES:
        return f"an array of shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=6, separator=", ", threshold=60, max_line_width=88)
        if text.count("\n") >= SHOWN_LINES or brief and "\n" in text:  # summarised: the difference line below says where
            start = np.array2string(value.ravel()[:4], precision=6, separator=", ").rstrip("]")
            return f"an array of shape {value.shape}, dtype {value.dtype}, starting {start}, ...]"
        return f"{text}  (shape {value.shape})"
    if isinstance(value, Foreign):
        return f"a {value.type_name}: {value.text[:200]}"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) for v in value):
        return "[" + ", ".join(show(v, brief) for v in value) + "]"
    if isinstance(value, list) and value and all(isinstance(v, tuple) and all(isinstance(a, np.ndarray) for a in v) for v in value):
        text = repr(value)  # a head's weights each: inline while they fit on a line, else by shape
        shapes = " and ".join("(" + ", ".join(str(a.shape) for a in v) + ")" for v in value)
        return text if "\n" not in text and len(text) <= 200 else f"{len(value)} tuples of arrays, of shapes {shapes}"
    if isinstance(value, dict) and value and all(isinstance(v, np.ndarray) for v in value.values()):
        text = repr(value)  # parameters by name: inline while they fit on a line, else by shape
        shapes = ", ".join(f"{name!r}: an array of shape {v.shape}" for name, v in value.items())
        return text if "\n" not in text and len(text) <= 200 else "{" + shapes + "}"
    return repr(value)[:400]


def labelled(label: str, value, brief: bool = False) -> str:
    """One value of a failure message: its label, then its text, continued lines aligned."""
    return f"  {label}" + show(value, brief).replace("\n", "\n" + " " * (2 + len(label)))


def fail(what: str, inputs: dict, expected=None, got=None, mistake: str | None = None, where: str | None = None):
    """Raise the verdict: the property in plain words, the input, what was expected and what came back.

    where: a note on which part of the result is wrong, when the check can tell. Arrays are shown
    by their start when the message would be longer than MESSAGE_LINES in full.
    """
    notes = []
    if isinstance(expected, np.ndarray) and isinstance(got, np.ndarray) and got.shape == expected.shape and got.size:
        notes.append(largest_difference(got, expected))
    if note := narrower(got, inputs) or float32_digits(got, expected, inputs):
        notes.append(note)
    if note := where or relation(got, expected):
        notes.append(note)
    if mistake:
        notes.append(f"  This looks like a known mistake: {mistake}.")
    shown = values(inputs, expected, got)
    if len("\n".join([what, *shown, *notes]).splitlines()) > MESSAGE_LINES:
        shown = values(inputs, expected, got, brief=True)
    raise CheckFailed("\n".join([what, *shown, *notes]), expected, inputs, mistake or "")


def values(inputs: dict, expected, got, brief: bool = False) -> list[str]:
    """The lines of a failure message that show the input, what was expected and what came back."""
    lines = [labelled(f"{name} = ", value, brief) for name, value in inputs.items()]
    if expected is not None:
        lines.append(labelled("expected: ", expected, brief))
    if got is not None:
        lines.append(labelled("got:      ", got, brief))
    return lines


def largest_difference(got: np.ndarray, expected: np.ndarray) -> str:
    """Where the entry that differs most is, with both values in full (the arrays above are rounded)."""
    with np.errstate(all="ignore"):
        gap = np.abs(got.astype(float) - expected.astype(float))
        gap = np.where(got == expected, 0.0, np.where(np.isnan(gap), np.inf, gap))
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(gap)), gap.shape))
    where = f" at index {index}" if index else ""
    with np.errstate(all="ignore"):
        apart = gap > FORWARD["atol"] + FORWARD["rtol"] * np.abs(expected.astype(float))  # beyond rounding
    first = tuple(int(i) for i in np.argwhere(apart)[0]) if apart.any() else index
    also = (
        f" The first entry to differ is at index {first}: expected {str(expected[first])}, got {str(got[first])}." if first != index else ""
    )
    return f"  The largest difference is{where}: expected {str(expected[index])}, got {str(got[index])} (a difference of {gap[index]:.3g}).{also}"


def narrower(got, inputs: dict) -> str | None:
    """A note when got is a float array of fewer digits than the float inputs (float32 from float64, say)."""
    arrays = [getattr(v, "value", v) for v in inputs.values()]
    widths = [a.dtype for a in arrays if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not (isinstance(got, np.ndarray) and got.dtype.kind == "f" and widths):
        return None
    wide = max(widths, key=lambda d: d.itemsize)
    if got.dtype.itemsize >= wide.itemsize:
        return None
    digits = round((np.finfo(got.dtype).nmant + 1) * np.log10(2))  # float32: 24 bits, about 7 significant digits
    return (
        f"  Your result is {got.dtype}, but the input is {wide}: {got.dtype} keeps about {digits} significant digits, "
        f"so it differs after those. Keep the input's dtype (look for .astype or np.{got.dtype})."
    )


def reference_functions(exercise: str) -> frozenset[str]:
    """The qualified names of every function of the exercises this one builds on."""
    return frozenset(f"{used}.{function}" for used in BY_NAME[exercise].uses for function in BY_NAME[used].functions)


def reference_for(names: frozenset[str]) -> dict:
    """The reference function of each qualified name, run by the grader when a stand-in asks."""
    found = {}
    for name in names:
        module, _, function = name.partition(".")
        found[name] = getattr(importlib.import_module(f"solutions.{module}"), function)
    return found


class Submission:
    """One exercise's view of the student's code: in the full kit, the earlier exercises it uses are the reference.

    The student's kit has no reference, so there every function is the student's own: a check of
    heads runs with their scores, masking and softmax, and the report says a failure may come from those.
    """

    def __init__(self, workers, exercise: str):  # workers: grader.check.checks.workers.Workers
        self.workers = workers
        self.with_reference = not kit.is_student_kit()
        self.base = reference_functions(exercise) if self.with_reference else frozenset()
        self.printed = Printed()
        self.last: tuple[str, tuple] | None = None  # (function, arguments) of the student's last call
        self.functions = BY_NAME[exercise].functions
        self.called: set[str] = set()  # the functions of this exercise the current check called

    def new_check(self) -> None:
        """A check begins: nothing printed, nothing called yet."""
        self.printed.new_check()
        self.called = set()

    def calls(self) -> tuple[str, ...]:
        """The functions of this exercise the current check called, in the exercise's order (the last built on the others)."""
        return tuple(function for function in self.functions if function in self.called)

    def last_example(self, error: BaseException | None = None) -> dict | None:
        """The last call's function and arguments, encoded, for `grader try`; None when there was none or it is large.

        With the check's expected value too, when the failure (error) gave one for exactly that call.
        """
        if self.last is None or len(blob := encode(self.last[1])) > EXAMPLE_BYTES or not blob:
            return None
        kept = {"function": self.last[0], "args": base64.b64encode(blob).decode("ascii")}
        if (want := _expected_for(error, *self.last)) is not None and len(wanted := encode(want)) <= EXAMPLE_BYTES:
            kept["expected"] = base64.b64encode(wanted).decode("ascii")
        return kept

    def call(self, module: str, function: str, *args, reference=()):
        """Call the student's function (with the functions named in reference served by the reference, in the full kit).

        Returns the Outcome; fails the check on an exception.
        """
        if f"{module}.{function}" in self.base:  # an earlier exercise, in the full kit: the reference, run here
            return self.reference(module, function, args)
        self.last = (function, args)
        self.called.add(function)
        broken = self.workers.broken
        for key in ((module, function), (module, None)):
            if key in broken:
                raise Halt(broken[key], {})
        served = self.base | frozenset(reference) if self.with_reference else frozenset()
        try:
            outcome = self.workers.call(served, module, function, args)
            self.printed.heard(function, outcome.output)
            return outcome
        except StudentError as error:
            self.printed.heard(function, error.output)
            if error.kind in FATAL:
                broken[(module, None if error.kind in MODULE_WIDE else function)] = error
                raise Halt(error, _named(function, args) if error.kind in ("timeout", "crashed") else {}) from None
            fail(f"{error.message}\nIt happened on this input:", _named(function, args))

    def reference(self, module: str, function: str, args: tuple) -> Outcome:
        """The reference of an earlier exercise, called in the grader on copies of the arguments."""
        copies = copy.deepcopy(args)
        started = time.monotonic()
        value = reference_for(frozenset([f"{module}.{function}"]))[f"{module}.{function}"](*copies)
        return Outcome(value, copies, time.monotonic() - started)


ARG_NAMES = {
    "attention_scores": ("q", "k"),
    "causal_mask": ("T",),
    "apply_causal_mask": ("scores",),
    "softmax": ("x",),
    "attention_head": ("x", "w_q", "w_k", "w_v"),
    "multi_head_attention": ("x", "heads", "w_o"),
    "softmax_backward": ("shares", "d_shares"),
    "attention_head_backward": ("d_out", "x", "w_q", "w_k", "w_v"),
    "sgd_step": ("params", "grads", "lr"),
    "train": ("model", "batches", "steps", "lr"),
}


ONE_OUTPUT = {"attention_scores", "causal_mask", "apply_causal_mask", "softmax", "softmax_backward"}


def _expected_for(error, function: str, args: tuple):
    """The expected array a check's failure gave for this very call of a one-output function, else None."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if not isinstance(error, CheckFailed) or not isinstance(error.expected, np.ndarray) or function not in ONE_OUTPUT:
        return None
    shown = [getattr(v, "value", v) for v in error.inputs.values()]
    same = len(shown) == len(args) and all(
        type(a) is type(b) and (np.array_equal(a, b, equal_nan=True) if isinstance(a, np.ndarray) else a == b) for a, b in zip(shown, args)
    )
    return error.expected if same else None


def _named(function: str, args) -> dict:
    """The arguments of a call by their parameter names."""
    names = ARG_NAMES.get(function, ())
    return {names[i] if i < len(names) else f"arg{i}": arg for i, arg in enumerate(args)}


def expect_array(got, shape: tuple, what: str, inputs: dict, dtype_kind: str = "f"):
    """Fail unless got is a plain ndarray of this shape and kind ("f" float, "b" bool), free of NaN."""
    if isinstance(got, Foreign) or type(got) is not np.ndarray:
        kind = got.type_name if isinstance(got, Foreign) else type(got).__name__
        fail(f"{what} should be a numpy array (np.ndarray), but it is a {kind}.", inputs, got=got)
    if got.shape != tuple(shape):
        fail(
            f"{what} should have shape {tuple(shape)}, but it has shape {got.shape}.",
            inputs,
            got=got,
            where=swapped_shape(got.shape, shape),
        )
    if dtype_kind == "b" and got.dtype != np.bool_:
        fail(f"{what} should be a bool array, but its dtype is {got.dtype}.", inputs, got=got)
    if dtype_kind == "f" and got.dtype.kind not in "fiu":
        fail(f"{what} should hold numbers, but its dtype is {got.dtype}.", inputs, got=got)
    if dtype_kind == "f" and np.isnan(got.astype(float, copy=False)).any():
        fail(f"{what} contains NaN (not a number): look for 0 / 0, inf / inf, inf - inf or exp overflowing.", inputs, got=got)


def expect_close(got, expected, what: str, inputs: dict, tolerance=FORWARD, mistake=None):
    """Fail unless got is an array shaped like expected and equal to it within the tolerance."""
    expect_array(got, expected.shape, what, inputs)
    if not np.allclose(got, expected, equal_nan=False, **tolerance):
        named = mistake() if callable(mistake) else mistake
        rtol, atol = tolerance["rtol"], tolerance["atol"]
        fail(f"{what} is not what it should be (tolerance rtol={rtol:g}, atol={atol:g}).", inputs, expected, got, named)


def expect_no_warnings(outcome, what: str, inputs: dict, rule: str, advice=None):
    """Fail when the call gave a RuntimeWarning (overflow, 0/0, log(0) and the like), naming each kind.

    advice(warning) may say what the first warning means and what to do, or None.
    """
    given = list(dict.fromkeys(w for w in outcome.warnings if w.startswith("RuntimeWarning:")))
    if given:
        told = advice(given[0]) if advice else None
        lines = [f"{what} gave a warning: {given[0]}"] + [f"  and also: {w}" for w in given[1:]]
        lines.append(f"{rule}." + (f" {told}." if told else ""))
        fail("\n".join(lines), inputs)


def expect_unchanged(before: dict, after, function: str):
    """Fail when the student's function modified one of its input arrays."""
    for (name, old), new in zip(before.items(), after):
        if isinstance(old, np.ndarray) and not (
            type(new) is np.ndarray and new.shape == old.shape and np.array_equal(new, old, equal_nan=True)
        ):
            fail(
                f"{function} changed its input {name}; it must leave its inputs as they were (work on a copy, or build a new array).",
                {f"{name} before": old, f"{name} after": new},
            )
