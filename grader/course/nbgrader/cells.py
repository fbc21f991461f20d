"""What the cells of the nbgrader notebook run: a try cell calls one function, a graded cell checks one exercise.

Both run in a fresh interpreter (`python -I`), so neither what earlier cells did in the kernel nor
files in the submission folder named like a library can change the verdict, a student's function
that hangs or kills its parent process cannot take the kernel with it, and everything the run
writes reaches the notebook on stdout. These are the student's: at autograde the graded cells are
not run at all (autograde.py writes their output from the files as submitted), and a
try cell only says so: at grading the student's code runs in the confined checks alone.
"""

import ast
import json
import os
import sys
import tempfile
from pathlib import Path

from grader.course.errors import NotPassed
from grader.sandbox import launcher

LIMIT = 240  # seconds for one exercise's checks in a graded cell
TRY_LIMIT = 5  # seconds for the student's function in a try cell
TRY_STARTUP = 30  # seconds on top of TRY_LIMIT for starting the interpreters around it
STATUS_WORDS = {"failed": "some checks fail", "not_started": "not started", "error": "error"}


class NotGraded(NotPassed):
    """A graded cell run by nbgrader's own kernel at autograde: the course lacks the kit's autograde steps."""


def check(exercise: str, submission: Path = Path("exercises")) -> None:
    """Run the checks this kit has on one exercise as saved now (the public ones in the student's kit); NotPassed unless it passes."""
    with tempfile.TemporaryDirectory() as tmp:
        result_file = Path(tmp) / "result.json"
        output, finished, _ = run(
            launcher.module(
                "grader.course.nbgrader.cells",
                exercise,
                str(submission.resolve()),
                str(result_file),
            )
        )
        print(output, end="", flush=True)
        if not finished:
            where = f"exercises/{exercise}.py"
            raise NotPassed(
                f"the checks of {exercise} did not finish within {LIMIT} s: look for a loop that never ends in {where}"
            )
        verdict = verdict_from(result_file)
    if verdict is None:
        raise NotPassed(f"the checks of {exercise} could not run (see above)")
    status, checks, failing = verdict
    if status != "passed":
        # one short line: nbgrader validate cuts longer ones
        which = f" ({named(failing)})" if failing and status != "not_started" else ""
        raise NotPassed(
            f"{exercise}: {STATUS_WORDS.get(status, status)}{which}. Fix exercises/{exercise}.py, save, run again."
        )
    if checks == "public":
        print(
            f"{exercise} passes its public checks; the hidden checks run when your work is graded."
        )
    else:
        print(f"{exercise} passes every check.")


def not_graded_here(exercise: str) -> None:
    """The hidden part of a graded cell: at autograde the kit writes the cell's output and never runs it."""
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        raise NotGraded(
            f"autograde ran the graded cell of {exercise} in the student's kernel, where the student's cells could set its "
            "points: add the kit's lines to the course's nbgrader_config.py (`grader nbgrader COURSE_DIR` prints them) "
            "and autograde again"
        )


def try_it(
    module: str,
    function: str,
    *args,
    limit: float = TRY_LIMIT,
    submission: Path = Path("exercises"),
) -> None:
    """Call the student's module.function(*args) on the files as saved now, and print what came of it (not at autograde)."""
    from grader.sandbox.worker.codec import encode

    if (
        os.environ.get("NBGRADER_EXECUTION") == "autograde"
    ):  # the kernel's tree, beside the grading: no student code
        print(
            f"Not run at grading: the graded cell below grades exercises/{module}.py as you submitted it."
        )
        return
    if not (submission / f"{module}.py").is_file():
        print(
            f"Cannot find {submission / module}.py: keep this notebook next to the folder {submission}/ you were given."
        )
        return
    try:
        request = encode(args)
    except Exception:  # a value the sandbox cannot carry: say which kinds it can
        print(
            f"try_it can pass numpy arrays, numbers, strings, and lists, tuples and dicts of them, not {args!r:.80}."
        )
        return
    with tempfile.TemporaryDirectory() as tmp:
        request_file = Path(tmp) / "args"
        request_file.write_bytes(request)
        command = launcher.module(
            "grader.course.nbgrader.cells",
            "--try",
            module,
            function,
            str(submission.resolve()),
            str(request_file),
            str(limit),
        )
        # what the student's code left running is ended with it
        output, finished, status = run(command, limit + TRY_STARTUP)
    print(output, end="", flush=True)
    if not finished:
        print(
            f"Trying {function} did not finish within {limit + TRY_STARTUP:g} s: look for a loop that never ends in exercises/{module}.py."
        )
    elif status:
        how = f"exit status {status}" if status > 0 else f"signal {-status}"
        print(
            f"{function} ended the process that ran it ({how}) instead of returning: remove that call and return the result."
        )


def run(command: list[str], limit: float | None = None) -> tuple[str, bool, int | None]:
    """The command's stdout and stderr together, whether it finished within limit (LIMIT by default), and its exit status."""
    status, output = launcher.run(command, LIMIT if limit is None else limit)
    return output, status is not None, status


def verdict_from(result_file: Path) -> tuple[str, str, list[str]] | None:
    """The exercise's status, which checks ran ("public" or "all") and those that did not pass, from the run's result file; None when there is none."""
    try:
        result = json.loads(result_file.read_text(encoding="utf-8"))
        return (
            str(result["status"]),
            str(result["checks"]),
            [str(name) for name in result.get("failing", [])],
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def named(failing: list[str], most: int = 3) -> str:
    """The checks that did not pass, by their short names, at most this many and how many more."""
    names = [name.partition(".")[2] or name for name in failing]
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def main(exercise: str, submission: str, result_file: str) -> int:
    """Run one exercise's checks, print its report and write its verdict as JSON."""
    from grader.check.report import render
    from grader.check.runner import run_checks
    from grader.sandbox.submission import SubmissionError, find_submission
    from grader.style import commands_as

    try:
        folder = find_submission(Path(submission), solutions=False)
    except SubmissionError as error:
        print(f"Cannot check {exercise}: {error}")
        return 1
    try:
        report = run_checks(folder, exercises=[exercise])
    except (
        Exception
    ) as error:  # a fault of the grader's: no traceback of its code in the student's notebook
        print(
            f"The grader could not check {exercise} ({type(error).__name__}): a fault in the grader, not in your code."
        )
        return 1
    with commands_as(
        "grader"
    ):  # the report names commands as the student types them: grader check ...
        print(render(report, folder))
    failing = [check.id for check in report.exercises[0].checks if check.status != "passed"]
    verdict = {"status": report.exercises[0].status, "checks": report.checks, "failing": failing}
    Path(result_file).write_text(json.dumps(verdict), encoding="utf-8")
    return 0


def main_try(module: str, function: str, submission: str, request_file: str, limit: str) -> int:
    """Call one of the student's functions in a worker and print its output and result."""
    from grader.sandbox.errors import StudentError
    from grader.sandbox.handle import StudentCode
    from grader.sandbox.worker.codec import decode, encode

    args = decode(Path(request_file).read_bytes())
    with StudentCode(Path(submission), timeout=float(limit)) as worker:
        try:
            outcome = worker.call(module, function, *args)
        except StudentError as error:
            print(error.output, end="")
            print(error.message)
            if error.kind == "not_started":
                print(f"Write it in exercises/{module}.py, save the file, and run this cell again.")
            return 0
    print(outcome.output, end="")
    if type(outcome.value) is tuple:
        for number, item in enumerate(outcome.value):
            show(f"{function} returned, item {number}", item)
    else:
        show(f"{function} returned", outcome.value)
    names = parameters(module, function)
    for number, (before, after) in enumerate(zip(args, outcome.args)):
        if encode(before) != encode(after):
            show(
                f"{names[number] if number < len(names) else f'argument {number + 1}'} after the call",
                after,
            )
    return 0


def show(label: str, value) -> None:
    """Print a label and a value as the student would see it, numbers to three decimals."""
    import numpy as np

    from grader.sandbox.worker.codec import Foreign

    if isinstance(value, Foreign):
        print(f"{label} a {value.type_name}: {value.text}")
        return
    with np.printoptions(precision=3, suppress=True):
        text = repr(value)
    print(f"{label}:\n{text}" if "\n" in text else f"{label} {text}")


def parameters(module: str, function: str) -> list[str]:
    """The function's parameter names, from the kit's stub."""
    from grader.paths import EXERCISES_DIR

    tree = ast.parse((EXERCISES_DIR / f"{module}.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return [argument.arg for argument in node.args.args]
    return []


if __name__ == "__main__":
    if sys.argv[1:2] == ["--try"]:
        sys.exit(main_try(*sys.argv[2:]))
    sys.exit(main(*sys.argv[1:]))
