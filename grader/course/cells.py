"""What the cells of the nbgrader notebook run: a try cell calls one function, a graded cell checks one exercise.

Both run in a fresh interpreter (`python -I`), so neither what earlier cells did in the kernel nor
files in the submission folder named like a library can change the verdict, a student's function
that hangs or kills its parent process cannot take the kernel or nbgrader with it, and everything
the run writes reaches the notebook on stdout: nbgrader zeroes a graded cell that writes to stderr.
"""

import ast
import json
import math
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

LIMIT = 240  # seconds for one exercise's checks; the course's cell timeout is set above this
TRY_LIMIT = 5  # seconds for the student's function in a try cell
TRY_STARTUP = 30  # seconds on top of TRY_LIMIT for starting the interpreters around it


def grade(exercise: str, submission: Path = Path("exercises")) -> float:
    """Run one exercise's hidden checks on the submission, print the report, return the points earned."""
    with tempfile.TemporaryDirectory() as tmp:
        result_file = Path(tmp) / "result.json"
        command = [sys.executable, "-I", "-m", "grader.course.cells", exercise, str(submission.resolve()), str(result_file)]
        output, finished, _ = run(command)
        print(output, end="", flush=True)
        if not finished:
            print(f"{exercise}: the checks did not finish within {LIMIT} s, so this exercise gets 0 points.")
            print(f"Look for a loop that never ends in exercises/{exercise}.py; `grader check {exercise}` shows which check hangs.")
            return 0.0
        return points_from(result_file, exercise)


def try_it(module: str, function: str, *args, limit: float = TRY_LIMIT, submission: Path = Path("exercises")) -> None:
    """Call the student's module.function(*args) on the files as saved now, and print what came of it."""
    from grader.sandbox.codec import encode
    from grader.sandbox.tree import RUN_VAR, kill_marked

    if not (submission / f"{module}.py").is_file():
        print(f"Cannot find {submission / module}.py: keep this notebook next to the folder {submission}/ you were given.")
        return
    try:
        request = encode(args)
    except Exception:  # a value the sandbox cannot carry: say which kinds it can
        print(f"try_it can pass numpy arrays, numbers, strings, and lists, tuples and dicts of them, not {args!r:.80}.")
        return
    marker = secrets.token_hex(8)
    with tempfile.TemporaryDirectory() as tmp:
        request_file = Path(tmp) / "args"
        request_file.write_bytes(request)
        command = [sys.executable, "-I", "-m", "grader.course.cells", "--try", module, function,
                   str(submission.resolve()), str(request_file), str(limit)]
        output, finished, status = run(command, limit + TRY_STARTUP, {**os.environ, RUN_VAR: marker})
    kill_marked(f"{RUN_VAR}={marker}")  # processes the student's code started and left behind
    print(output, end="", flush=True)
    if not finished:
        print(f"Trying {function} did not finish within {limit + TRY_STARTUP:g} s: look for a loop that never ends in exercises/{module}.py.")
    elif status:
        how = f"exit status {status}" if status > 0 else f"signal {-status}"
        print(f"{function} ended the process that ran it ({how}) instead of returning: return a value instead.")


def run(command: list[str], limit: float | None = None, env: dict | None = None) -> tuple[str, bool, int | None]:
    """The command's stdout and stderr together, whether it finished within limit (LIMIT by default), and its exit status."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", env=env)
    try:
        return process.communicate(timeout=LIMIT if limit is None else limit)[0], True, process.returncode
    except subprocess.TimeoutExpired:
        process.kill()  # the student's worker dies with it
        return process.communicate()[0], False, None


def points_from(result_file: Path, exercise: str) -> float:
    """The points in the run's result file, or 0 with a message when there is none."""
    try:
        points = float(json.loads(result_file.read_text(encoding="utf-8"))["points"])
    except (OSError, ValueError, KeyError, TypeError):
        print(f"{exercise}: the grader could not check this exercise, so it gets 0 points (see above).")
        return 0.0
    return points if math.isfinite(points) else 0.0


def main(exercise: str, submission: str, result_file: str) -> int:
    """Run one exercise's checks, print its report and write its verdict as JSON."""
    from grader.check.report import render
    from grader.check.runner import run_checks
    from grader.sandbox.submission import SubmissionError, find_submission

    try:
        folder = find_submission(Path(submission), solutions=False)
    except SubmissionError as error:
        print(f"Cannot check {exercise}: {error}")
        return 1
    try:
        report = run_checks(folder, exercises=[exercise])
    except Exception as error:  # a fault of the grader's: no traceback of its code in the student's notebook
        print(f"The grader could not check {exercise} ({type(error).__name__}): a fault in the grader, not in your code.")
        return 1
    print(render(report, folder))
    Path(result_file).write_text(json.dumps(report.exercises[0].to_json()), encoding="utf-8")
    return 0


def main_try(module: str, function: str, submission: str, request_file: str, limit: str) -> int:
    """Call one of the student's functions in a worker and print its output and result."""
    from grader.sandbox.codec import decode, encode
    from grader.sandbox.errors import StudentError
    from grader.sandbox.student import Student

    args = decode(Path(request_file).read_bytes())
    with Student(Path(submission), timeout=float(limit)) as student:
        try:
            outcome = student.call(module, function, *args)
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
            show(f"{names[number] if number < len(names) else f'argument {number + 1}'} after the call", after)
    return 0


def show(label: str, value) -> None:
    """Print a label and a value as the student would see it, numbers to three decimals."""
    import numpy as np

    from grader.sandbox.codec import Foreign

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
