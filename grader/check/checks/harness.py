"""What every check uses: calls into the student's worker and strict comparisons with plain messages."""

import base64
import copy
import importlib
import time

import numpy as np

from grader import kit
from grader.check.checks.printed import Printed
from grader.check.checks.seen import SEEN
from grader.check.checks.signatures import ARG_NAMES

# noqa: F401  (narrower and largest_difference for grader try)
from grader.check.checks.where import (
    float32_digits,
    largest_difference,
    narrower,
    relation,
    swapped_shape,
    widened,
)
from grader.exercises import BUILDS_ON, BY_NAME
from grader.sandbox.errors import StudentError
from grader.sandbox.handle import Outcome
from grader.sandbox.worker.codec import Foreign, encode

SEED = 20240604  # the fixed Hypothesis seed of every check, printed with every report
BUDGET = 200.0  # seconds for all the checks of one run, within batch's and nbgrader's own limits
# later calls would fail the same way
FATAL = {
    "not_started",
    "timeout",
    "crashed",
    "import",
    "refused",
    "memory",
    "grader",
}
MODULE_WIDE = {"import", "refused"}
# the encoded size an example may have to be kept for `grader try` (about 4,000 numbers)
EXAMPLE_BYTES = 32 << 10
SHOWN_ENTRIES = 400  # a larger array is named by its shape and dtype: its numbers would not help
SHOWN_LINES = 8  # an array printing more lines is summarised, so one failure's message stays short
MESSAGE_LINES = 25  # a failure's message longer than this in full shows every array of several lines by its start
FORWARD = {"rtol": 1e-6, "atol": 1e-9}
GRADIENT = {"rtol": 1e-4, "atol": 1e-7}
PRECISION = 1e-8  # of the largest expected entry: float64 in another order differs by about 1e-15 of it, float32 by about 6e-8


class CheckFailed(AssertionError):
    """A check's verdict on the student's code, with the message the student reads.

    expected and inputs: what the check knew the answer should be, on which input, for `grader try`;
    mistake: the known mistake the output matches, named where the diagnosis is made (the reports' field).
    blame: the function of the exercise the failure is about, when the check knows better than its declaration
    (grader.check.checks.judged): the one a call raised in, or an earlier one the checked function calls.
    """

    def __init__(
        self,
        message: str,
        expected=None,
        inputs: dict | None = None,
        blame: str | None = None,
        mistake: str = "",
    ):
        super().__init__(message)
        self.expected, self.inputs, self.blame, self.mistake = (
            expected,
            inputs or {},
            blame,
            mistake,
        )


class Halt(BaseException):
    """The student's code cannot run at all (a stub, a hang, a crash): stop the check, try no more inputs.

    A BaseException, so Hypothesis passes it straight up instead of shrinking an input that does
    not matter.
    """

    def __init__(self, error: StudentError, inputs: dict, blame: str | None = None):
        super().__init__(error.message)
        self.error = error
        self.inputs = inputs
        self.blame = blame  # the function called when it stopped


def show(value, brief: bool = False) -> str:
    """A short, readable form of an input or output for a failure message; brief: an array of several lines by its start."""
    if isinstance(value, np.ndarray) and value.size > SHOWN_ENTRIES:
        return f"an array of shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=6, separator=", ", threshold=60, max_line_width=88)
        if (
            text.count("\n") >= SHOWN_LINES or brief and "\n" in text
        ):  # summarised: the difference line below says where
            start = np.array2string(value.ravel()[:4], precision=6, separator=", ").rstrip("]")
            return f"an array of shape {value.shape}, dtype {value.dtype}, starting {start}, ...]"
        return f"{text}  (shape {value.shape})"
    if isinstance(value, Foreign):
        return f"a {value.type_name}: {value.text[:200]}"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) for v in value):
        return "[" + ", ".join(show(v, brief) for v in value) + "]"
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, tuple) and all(isinstance(a, np.ndarray) for a in v) for v in value)
    ):
        text = repr(value)  # a head's weights each: inline while they fit on a line, else by shape
        shapes = " and ".join("(" + ", ".join(str(a.shape) for a in v) + ")" for v in value)
        return (
            text
            if "\n" not in text and len(text) <= 200
            else f"{len(value)} tuples of arrays, of shapes {shapes}"
        )
    if isinstance(value, dict) and value and all(isinstance(v, np.ndarray) for v in value.values()):
        text = repr(value)  # parameters by name: inline while they fit on a line, else by shape
        shapes = ", ".join(f"{name!r}: an array of shape {v.shape}" for name, v in value.items())
        return text if "\n" not in text and len(text) <= 200 else "{" + shapes + "}"
    return repr(value)[:400]


def labelled(label: str, value, brief: bool = False) -> str:
    """One value of a failure message: its label, then its text, continued lines aligned."""
    return f"  {label}" + show(value, brief).replace("\n", "\n" + " " * (2 + len(label)))


def fail(
    what: str,
    inputs: dict,
    expected=None,
    got=None,
    mistake=None,
    where: str | None = None,
    blame: str | None = None,
):
    """Raise the verdict: the property in plain words, the input, what was expected and what came back.

    mistake: the known mistakes (a name or several) whose own code gives got on this input; those are
    named that gave the student's output on every failure of the check (grader.check.checks.seen).
    where: a note on which part of the result is wrong, when the check can tell. Arrays are shown
    by their start when the message would be longer than MESSAGE_LINES in full.
    """
    mistake = SEEN.named([mistake] if isinstance(mistake, str) else mistake or ())
    notes = []
    if (
        isinstance(expected, np.ndarray)
        and isinstance(got, np.ndarray)
        and got.shape == expected.shape
        and got.size
    ):
        notes.append(largest_difference(got, expected))
    if note := narrower(got, inputs, expected) or float32_digits(got, expected, inputs):
        notes.append(note)
    if note := where or relation(got, expected):
        notes.append(note)
    if note := widened(got, inputs):
        notes.append(note)
    if len(mistake) == 1:
        notes.append(f"  This looks like a known mistake: {mistake[0]}.")
    elif (
        mistake
    ):  # mistakes that give the same on every input that failed: the check cannot tell which
        notes.append(
            "  This looks like one of these known mistakes, alike on every input that failed here: "
            + "; or ".join(mistake)
            + "."
        )
    shown = values(inputs, expected, got)
    if len("\n".join([what, *shown, *notes]).splitlines()) > MESSAGE_LINES:
        shown = values(inputs, expected, got, brief=True)
    raise CheckFailed(
        "\n".join([what, *shown, *notes]),
        expected,
        inputs,
        blame,
        mistake[0] if len(mistake) == 1 else "",
    )


def values(inputs: dict, expected, got, brief: bool = False) -> list[str]:
    """The lines of a failure message that show the input, what was expected and what came back."""
    lines = [labelled(f"{name} = ", value, brief) for name, value in inputs.items()]
    if expected is not None:
        lines.append(labelled("expected: ", expected, brief))
    if got is not None:
        lines.append(labelled("got:      ", got, brief))
    return lines


def reference_functions(exercise: str) -> frozenset[str]:
    """The qualified names of every function of the exercises this one builds on."""
    return frozenset(
        f"{used}.{function}"
        for used in BY_NAME[exercise].uses
        for function in BY_NAME[used].functions
    )


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

    def __init__(
        self, workers, exercise: str
    ):  # workers: grader.check.checks.workers.StudentCodePool
        self.workers = workers
        self.with_reference = not kit.is_student_kit()
        self.base = reference_functions(exercise) if self.with_reference else frozenset()
        self.printed = Printed()
        self.last: tuple[str, tuple] | None = (
            None  # (function, arguments) of the student's last call
        )
        self.exercise, self.functions = exercise, BY_NAME[exercise].functions
        self.called: set[str] = set()  # the functions of this exercise the current check called
        # earlier functions of this exercise (BUILDS_ON) the student's own stood under a call
        self.own_earlier: set[str] = set()
        # functions of this exercise the reference serves everywhere, for a rerun
        self.standing_in: frozenset[str] = frozenset()
        self.failing: set[str] = set()  # the functions of this exercise a check so far has failed
        self.widened = ""  # the note on the current check's first call that made float32 input float64 (where.widened)

    def new_check(self) -> None:
        """A check begins: nothing printed, nothing called, no failure seen yet."""
        self.printed.new_check()
        self.called, self.own_earlier, self.widened = set(), set(), ""
        SEEN.forget()

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
        if (want := _expected_for(error, *self.last)) is not None and len(
            wanted := encode(want)
        ) <= EXAMPLE_BYTES:
            kept["expected"] = base64.b64encode(wanted).decode("ascii")
        return kept

    def call(self, module: str, function: str, *args, reference=()):
        """Call the student's function (with the functions named in reference served by the reference, in the full kit).

        Returns the Outcome; fails the check on an exception.
        """
        if (
            f"{module}.{function}" in self.base | self.standing_in
        ):  # an earlier exercise, in the full kit: the reference, run here
            return self.reference(module, function, args)
        self.last = (function, args)
        self.called.add(function)
        served = (
            self.base | frozenset(reference) | self.standing_in
            if self.with_reference
            else frozenset()
        )
        if (earlier := BUILDS_ON.get(function)) and f"{module}.{earlier}" not in served:
            self.own_earlier.add(earlier)
        broken = self.workers.broken
        # a rerun's own record
        own = (module, function, self.standing_in) if self.standing_in else (module, function)
        for key in (own, (module, None)):
            if key in broken:
                raise Halt(broken[key], {}, function)
        try:
            outcome = self.workers.call(served, module, function, args)
            self.printed.heard(function, outcome.output)
            self.widened = self.widened or (
                f"{function}: " + note.strip()
                if (note := widened(outcome.value, _named(function, args)))
                else ""
            )
            return outcome
        except StudentError as error:
            self.printed.heard(function, error.output)
            if error.kind in FATAL:
                broken[(module, None) if error.kind in MODULE_WIDE else own] = error
                raise Halt(
                    error,
                    _named(function, args) if error.kind in ("timeout", "crashed") else {},
                    function,
                ) from None
            fail(
                f"{error.message}\nIt happened on this input:",
                _named(function, args),
                blame=function,
            )

    def reference(self, module: str, function: str, args: tuple) -> Outcome:
        """The reference of an earlier exercise, called in the grader on copies of the arguments."""
        copies = copy.deepcopy(args)
        started = time.monotonic()
        value = reference_for(frozenset([f"{module}.{function}"]))[f"{module}.{function}"](*copies)
        return Outcome(value, copies, time.monotonic() - started)


ONE_OUTPUT = {"attention_scores", "causal_mask", "apply_causal_mask", "softmax", "softmax_backward"}


def _expected_for(error, function: str, args: tuple):
    """The expected array a check's failure gave for this very call of a one-output function, else None."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if (
        not isinstance(error, CheckFailed)
        or not isinstance(error.expected, np.ndarray)
        or function not in ONE_OUTPUT
    ):
        return None
    shown = [getattr(v, "value", v) for v in error.inputs.values()]
    same = len(shown) == len(args) and all(
        type(a) is type(b)
        and (np.array_equal(a, b, equal_nan=True) if isinstance(a, np.ndarray) else a == b)
        for a, b in zip(shown, args)
    )
    return error.expected if same else None


def _named(function: str, args) -> dict:
    """The arguments of a call by their parameter names."""
    names = ARG_NAMES.get(function, ())
    return {names[i] if i < len(names) else f"arg{i}": arg for i, arg in enumerate(args)}


def expect_array(got, shape: tuple, what: str, inputs: dict, dtype_kind: str = "f"):
    """Fail unless got is a plain ndarray of this shape and kind ("f" float, "b" bool), free of NaN, no narrower than its float inputs."""
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
        fail(
            f"{what} contains NaN (not a number): look for 0 / 0, inf / inf, inf - inf or exp overflowing.",
            inputs,
            got=got,
        )
    if dtype_kind == "f" and narrower(got, inputs):
        fail(
            f"{what} should keep the precision of its input, but its dtype is {got.dtype}.",
            inputs,
            got=got,
        )


def expect_close(
    got, expected, what: str, inputs: dict, tolerance=FORWARD, mistake=None, where=None
):
    """Fail unless got is an array shaped like expected, no narrower a float, and equal to it within the tolerance.

    mistake and where: as fail's, or functions giving them, called only on a failure; where adds to the note
    of how got relates to expected.
    """
    expect_array(got, expected.shape, what, inputs)
    if (
        got.dtype.kind == "f"
        and expected.dtype.kind == "f"
        and got.dtype.itemsize < expected.dtype.itemsize
    ):
        fail(
            f"{what} should be {expected.dtype}, as its input is, but its dtype is {got.dtype}.",
            inputs,
            expected,
            got,
        )
    if not np.allclose(got, expected, equal_nan=False, **tolerance):
        named = mistake() if callable(mistake) else mistake
        said = where() if callable(where) else where
        said = "\n".join(note for note in (relation(got, expected), said) if note) or None
        rtol, atol = tolerance["rtol"], tolerance["atol"]
        fail(
            f"{what} is not what it should be (tolerance rtol={rtol:g}, atol={atol:g}).",
            inputs,
            expected,
            got,
            named,
            said,
        )


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


def expect_precise(got, expected, what: str, inputs: dict):
    """Fail when got, an array already within the check's tolerance, is less precise than float64 arithmetic: float32 inside.

    The tolerances allow for another order of the same float64 operations, and more; float32 rounding
    inside shows as a difference of a few 1e-8 of the largest entry, which no float64 computation makes.
    """
    finite = np.isfinite(expected)
    if expected.dtype != np.float64 or not finite.any():
        return
    scale = float(np.max(np.abs(expected[finite])))
    with np.errstate(all="ignore"):
        worst = (
            float(np.max(np.abs(got.astype(float)[finite] - expected[finite]))) / scale
            if scale
            else 0.0
        )
    if worst > PRECISION:
        fail(
            f"{what} is less precise than float64 arithmetic: it differs from the expected result by {worst:.2g} of its largest entry, "
            "where float64 in any order of the same operations differs by about 1e-15.",
            inputs,
            expected,
            got,
        )
