"""What each autograder cell of the nbgrader notebook runs: one exercise's checks, then its points.

The checks run in a fresh interpreter (`python -I`), so neither what earlier cells did in the
kernel nor files in the submission folder named like a library can change the verdict, and
everything the run writes reaches the notebook on stdout: nbgrader zeroes a cell that writes to
stderr.
"""

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

LIMIT = 240  # seconds for one exercise's checks; the course's cell timeout is set above this


def grade(exercise: str, submission: Path = Path("exercises")) -> float:
    """Run one exercise's hidden checks on the submission, print the report, return the points earned."""
    with tempfile.TemporaryDirectory() as tmp:
        result_file = Path(tmp) / "result.json"
        command = [sys.executable, "-I", "-m", "grader.nbgrader_cell", exercise, str(submission.resolve()), str(result_file)]
        output, finished = run(command)
        print(output, end="", flush=True)
        if not finished:
            print(f"{exercise}: the checks did not finish within {LIMIT} s, so this exercise gets 0 points.")
            print(f"Look for a loop that never ends in exercises/{exercise}.py; `grader check {exercise}` shows which check hangs.")
            return 0.0
        return points_from(result_file, exercise)


def run(command: list[str]) -> tuple[str, bool]:
    """The command's stdout and stderr together, and whether it finished within LIMIT."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    try:
        return process.communicate(timeout=LIMIT)[0], True
    except subprocess.TimeoutExpired:
        process.kill()  # the student's worker dies with it
        return process.communicate()[0], False


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
    from grader.report import render
    from grader.runner import run_checks
    from grader.submission import SubmissionError, find_submission

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


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
