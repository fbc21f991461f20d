"""`grader try EXERCISE [FUNCTION]`: your function in the foreground on a small example, beside what it should give.

The example is the input the report showed first for your function, when `grader check` (or watch,
or status) kept one, else its smallest worked example; the result is judged as the checks judge it
(grader.student.judging), so try and check reach the same verdict. Your code runs in a Python of its own with
this terminal attached, so print() shows and breakpoint() stops there; nothing is confined or
timed, as when you run your own script. A folder that is not your own exercises/ (a student's
submission, tried by an instructor) runs confined in the sandbox's worker instead, as `grader check` does.
"""

import base64
import struct
import tempfile
from pathlib import Path

import click
import numpy as np

from grader import kit, outlet
from grader.check.checks.examples import examples, expected
from grader.check.checks.harness import ARG_NAMES, reference_for, reference_functions
from grader.check.checks.trained import by_definition
from grader.check.report import submission_args
from grader.check.state import State, live_fingerprints
from grader.exercises import BUILDS_ON, BY_NAME, MODULE_OF
from grader.sandbox import launcher
from grader.sandbox.worker.codec import Batches, Foreign, ToyModel, decode, encode
from grader.student import foreground, judging
from grader.student.inputs import read_inputs, shape_problem
from grader.student.status import resolve, unknown_function
from grader.style import in_sentence, mark, paint, shown_command

NO_REFERENCE = "the student's kit holds no reference solution"
TOY = {"w": np.array([[0.5], [-0.25]]), "b": np.array([0.1])}
CONFINED_SECONDS = 60.0  # for one call of someone else's function, confined
PAIRS = [
    (np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([[1.0], [0.0]])),
    (np.array([[2.0, 0.0]]), np.array([[1.0]])),
]


def try_function(
    exercise: str, function: str | None = None, submission: Path | None = None, given: tuple = ()
) -> int:
    """Run each function of the exercise (or the one named) on its example, or on the given inputs; 0 when all match."""
    folder = resolve(submission, "try your function")
    if folder is None or unknown_function(exercise, function):
        return 2
    functions = BY_NAME[exercise].functions
    # the one function --input is for
    target = function or (functions[0] if len(functions) == 1 else None)
    if given and (target is None or defined(target)):
        click.echo(
            f"--input goes with one function of arrays: name it, as in `grader try {exercise} FUNCTION --input ...`"
            f" ({', '.join(f for f in functions if f not in ('sgd_step', 'train'))}).",
            err=True,
        )
        return 2
    inputs = read_inputs(given, target) if given else {}
    if inputs is None:
        return 2
    matches = [
        try_one(folder, exercise, name, inputs) for name in ([function] if function else functions)
    ]
    return 0 if all(matches) else 1


def given_example(exercise: str, function: str, inputs: dict) -> tuple:
    """The function's example with the student's own inputs in place, and what it should give if the kit knows."""
    args, _, names, _ = example(exercise, function)
    args = tuple(inputs.get(name, arg) for name, arg in zip(names, args))
    theirs = [name for name in names if name not in inputs]
    source = (
        f"your input ({in_sentence(list(inputs))} from --input; {in_sentence(theirs)} from the small example)"
        if theirs
        else "your input"
    )
    try:
        judge = f"{NO_REFERENCE}; {shown_command('check', exercise)} judges your function"
        want = judge if kit.is_student_kit() else should_give(exercise, function, args)
    except Exception as error:  # noqa: BLE001  (inputs the reference cannot take: say so beside the student's result)
        want = f"the reference could not take these inputs either ({type(error).__name__}: {error})"
    return args, want, names, source


def try_one(folder: Path, exercise: str, function: str, inputs: dict | None = None) -> bool:
    """Show the example, run the student's function on it, and show what came back beside what should have.

    Judged as the checks judge (grader.student.judging): their comparison, tolerance and dtype rule,
    the inputs left as they were, and the call made after another one in the same process.
    """
    if inputs:
        args, want, names, source = given_example(exercise, function, inputs)
        kept = None
    else:
        args, want, names, source, kept = failing(folder, exercise, function) or (
            *example(exercise, function),
            None,
        )
    click.echo(paint(f"{function} on {source}:", bold=True))
    for name, value in zip(names, args):
        click.echo(shown(f"  {name} = ", value))
    if inputs and (problem := shape_problem(function, dict(zip(names, args)))):
        click.echo(
            f"{mark('failed')} Not run: {problem}. Give the other arguments with --input too.\n"
        )
        return False
    outcome = run(folder, exercise, function, args)
    if not isinstance(outcome, dict):  # None, or "not started"
        return not_returned(folder, exercise, function, outcome)
    got = outcome["value"] if function != "sgd_step" else outcome["args"][0]
    if function == "train":
        got = {
            "losses": got,
            "params": outcome["args"][0].params,
            "batches taken": outcome["args"][1].taken,
        }
    click.echo(shown("  yours:    ", got))
    if isinstance(
        want, str
    ):  # why there is no expected value: the student's kit has no reference, or it could not run
        click.echo(f"  No expected value for this input: {want}.")
        wrong = judging.problems(
            judging.Call(function, names, args, None, outcome["args"]), None, {}
        )[1:]  # the inputs unchanged
    else:
        click.echo(shown("  expected: ", want))
        tolerance = example_tolerance(exercise, function, args, want) or judging.tolerance_for(
            function, kept
        )
        wrong = judging.problems(
            judging.Call(function, names, args, got, outcome["args"]), want, tolerance
        )
    for said in wrong:
        click.echo(said)
    return said_verdict(folder, function, kept, wrong, compared=not isinstance(want, str))


def not_returned(folder: Path, exercise: str, function: str, outcome: str | None) -> bool:
    """Say that the call did not return (None) or is a stub ("not started"); True only where the check blames an earlier function."""
    if outcome is None and (said := through_earlier(folder, exercise, function, "it raised")):
        click.echo(said)
        return True
    said = (
        "is not written yet: it still raises NotImplementedError"
        if outcome
        else "did not return (see above)"
    )
    click.echo(f"{mark('not_started' if outcome else 'failed')} {function} {said}.\n")
    return False


def said_verdict(
    folder: Path, function: str, kept: dict | None, wrong: list[str], compared: bool
) -> bool:
    """Say try's verdict, the checks' own: what it found wrong, else what `grader check` found of these very files; True when right."""
    exercise = MODULE_OF[function]
    more = shown_command("check", exercise, *submission_args(folder, False))
    saved = saved_failures(folder, exercise)
    check = "" if wrong or saved is None else saved[function]
    if wrong and (said := through_earlier(folder, exercise, function, "they differ")):
        click.echo(said)
        return True
    if (
        check and kept is not None
    ):  # a property of this very call that try does not see (a warning, say): the check's words
        said = str(kept.get("said", "")).rstrip(".")
        click.echo(
            f"{mark('failed')} {kept.get('check', check)} fails on this input: {said}; {more} says more.\n"
        )
    elif check:
        click.echo(
            f"{mark('failed')} they agree here, but {more} found {function} wrong ({check}) on an input try could not keep.\n"
        )
    elif compared or wrong:
        click.echo(
            f"{mark('failed' if wrong else 'passed')} {'they differ' if wrong else 'they agree'}; {more} checks far more.\n"
        )
    else:
        click.echo("")
    return not (wrong or check)


def through_earlier(folder: Path, exercise: str, function: str, what: str) -> str:
    """When the full kit's check passes the function with the reference's earlier one standing in, and fails that one:
    the verdict in words (what: how try saw it go wrong), else ""."""
    saved, earlier = saved_failures(folder, exercise), BUILDS_ON.get(function, "")
    if not saved or saved[function] or not saved.get(earlier):
        return ""
    more = shown_command("check", exercise, *submission_args(folder, False))
    return (
        f"{mark('passed')} {function} itself is right: {what} through your {earlier}, which {saved[earlier]} fails; "
        f"with the reference {earlier} standing in, {more} passes {function}. Fix {earlier} first.\n"
    )


def failing(folder: Path, exercise: str, function: str) -> tuple | None:
    """(arguments, expected result or the check's words, argument names, source, the kept record) of the failing call the report
    showed first for this function, if kept: of the latest run's, the first in the checks' order."""
    found = [
        (check, kept)
        for check, kept in State.load(folder).failing.items()
        if check.partition(".")[0] == exercise
    ]
    mine = [(check, kept) for check, kept in found if kept["function"] == function]
    if not mine:
        return None
    latest = max(str(kept.get("at", "")) for _, kept in mine)
    for check, kept in (
        item for item in mine if str(item[1].get("at", "")) == latest
    ):  # the checks' order within a run
        if tried := _kept(exercise, function, kept):
            return (
                *tried,
                ARG_NAMES[function],
                f"the input of the failing check {check}{kept_by(kept)}",
                {**kept, "check": check},
            )
    return None


def saved_failures(folder: Path, exercise: str) -> dict[str, str] | None:
    """Per function, the first check the verdict saved for these very files (unchanged since) fails it on, or ""; None: no such verdict."""
    try:
        saved = State.load(folder).fresh(live_fingerprints(folder)).get(exercise)
    except (OSError, ValueError):
        return None
    if saved is None:
        return None
    failed = {
        function: [c.id for c in saved.checks if c.functions.get(function) in ("failed", "error")]
        for function in saved.functions
    }
    return {function: ids[0] if ids else "" for function, ids in failed.items()}


def _kept(exercise: str, function: str, kept: dict) -> tuple | None:
    """(arguments, expected result or the check's words) of one kept input; None when the record is damaged."""
    try:
        args = decode(base64.b64decode(kept["args"]))
        known = decode(base64.b64decode(kept["expected"])) if "expected" in kept else None
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        struct.error,
    ):  # a damaged state file: use the worked example
        return None
    if defined(function) or not kit.is_student_kit():
        return args, should_give(exercise, function, args)
    want = known if known is not None else worked_answer(exercise, function, args)
    said = str(kept.get("said", "")).rstrip(".")
    return args, f"{NO_REFERENCE}; the check said: {said}" if want is None else want


def kept_by(kept: dict) -> str:
    """Which command kept a failing input, and when: " (kept by grader watch at 23:53:13)"."""
    by, at = str(kept.get("by", "")), str(kept.get("at", ""))
    return f" (kept by grader {by}{f' at {at}' if at else ''})" if by.isidentifier() else ""


def worked_answer(exercise: str, function: str, args: tuple):
    """The stored answer of the worked example with exactly these arguments, or None."""
    for found in examples(f"{exercise}.{function}"):
        mine = found.args()
        if len(mine) == len(args) and all(_same(a, b) for a, b in zip(mine, args)):
            return returned(function, expected(found))
    return None


def _same(a, b) -> bool:
    """Whether two arguments are equal: arrays by dtype, shape and value."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def defined(function: str) -> bool:
    """Whether the result is known from the definition alone, so the student's kit can show it too."""
    return function in ("sgd_step", "train")


def should_give(exercise: str, function: str, args: tuple):
    """What the function should give for these arguments: by definition, or the reference's (the full kit only)."""
    if function == "sgd_step":
        params, grads, lr = args
        return {name: params[name] - lr * grads[name] for name in params}
    if function == "train":
        model, batches, steps, lr = args
        losses, weights = by_definition(model.params, batches.pairs, steps, lr)
        return {"losses": [float(v) for v in losses], "params": weights, "batches taken": steps}
    return reference_for(frozenset([f"{exercise}.{function}"]))[f"{exercise}.{function}"](*args)


def example(exercise: str, function: str):
    """(arguments, expected result, argument names, source) of the function's smallest example."""
    if function == "sgd_step":
        args = {"w": np.array([1.0, 2.0])}, {"w": np.array([0.5, -0.5])}, 0.1
        return args, should_give(exercise, function, args), ARG_NAMES["sgd_step"], "a small example"
    if function == "train":
        args = ToyModel(dict(TOY)), Batches(PAIRS), 2, 0.1
        return args, should_give(exercise, function, args), ARG_NAMES["train"], "a small example"
    found = examples(f"{exercise}.{function}")[0]
    return found.args(), returned(function, expected(found)), ARG_NAMES[function], "a small example"


def returned(function: str, outputs: list):
    """A worked example's outputs as the function returns them: one array, (out, shares), or (out, [shares of each head])."""
    if function == "multi_head_attention":
        return outputs[0], list(outputs[1:])
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def example_tolerance(exercise: str, function: str, args: tuple, want) -> dict | None:
    """The worked example's own tolerance when these are its very arguments (its float32 sizes are judged looser), else None."""
    for found in examples(f"{exercise}.{function}"):
        mine = found.args()
        if len(mine) == len(args) and all(_same(a, b) for a, b in zip(mine, args)):
            first = want[0] if isinstance(want, tuple) else want
            return found.tolerance(first) if isinstance(first, np.ndarray) else None
    return None


def run(folder: Path, exercise: str, function: str, args: tuple) -> dict | str | None:
    """The student's call: in the foreground for their own exercises/, else confined; its value and arguments after, or None."""
    if not launcher.own_exercises(folder):
        return run_confined(folder, exercise, function, args)
    with tempfile.TemporaryDirectory(prefix="grader-try-") as scratch:
        given, answer = Path(scratch) / "args", Path(scratch) / "answer"
        given.write_bytes(encode((judging.other_input(args), args)))
        # no -I: the student's Python as they would run a script (PYTHONBREAKPOINT and the like kept)
        command = launcher.python(
            "-m",
            "grader.student.foreground",
            str(folder),
            exercise,
            function,
            str(given),
            str(answer),
            flags=(),
        )
        with launcher.Child(
            command, output="terminal"
        ) as child:  # attached to this terminal: print() and breakpoint() work
            child.wait()
        if child.returncode == foreground.NOT_STARTED:
            return "not started"
        if child.returncode != 0 or not answer.exists():
            return None
        return decode(answer.read_bytes())


def run_confined(folder: Path, exercise: str, function: str, args: tuple) -> dict | str | None:
    """Someone else's folder (a student's submission): the call in a confined worker, at the strongest isolation here.

    In the full kit the earlier exercises are the reference, as `grader check` grades this one.
    """
    from grader.sandbox.errors import StudentError
    from grader.sandbox.handle import StudentCode

    served = {} if kit.is_student_kit() else reference_for(reference_functions(exercise))
    with StudentCode(folder, reference=served, timeout=CONFINED_SECONDS) as worker:
        try:
            # as the checks call it: after another call
            worker.call(exercise, function, *judging.other_input(args))
        except StudentError:
            pass  # what the call shown does is what counts
        try:
            outcome = worker.call(exercise, function, *args)
        except StudentError as error:
            if error.kind == "not_started":
                return "not started"
            click.echo(
                outlet.terminal(
                    "\n".join(part for part in (error.output.strip(), error.message) if part),
                    "\n\t",
                ),
                err=True,
            )
            return None
    if outcome.output.strip():
        click.echo(outlet.terminal(outcome.output.rstrip(), "\n\t"))
    return {"value": outcome.value, "args": outcome.args}


def shown(label: str, value) -> str:
    """A label and a value, numbers to four decimals, continued lines aligned under the first."""
    if isinstance(value, Foreign):
        text = f"a {value.type_name}: {value.text}"
    elif isinstance(value, ToyModel):
        text = f"a toy linear model with params {value.params}"
    elif isinstance(value, Batches):
        text = f"{len(value.pairs)} (x, y) batches"
    else:
        with np.printoptions(precision=4, suppress=True, threshold=40):
            text = repr(value)
    return label + text.replace("\n", "\n" + " " * len(label))
