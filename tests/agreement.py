"""`grader try`'s verdict beside `grader check`'s, function by function, on one submission folder (a mutant, a right variant)."""

import shutil
from pathlib import Path

from click.testing import CliRunner

from grader.check.runner import run_checks
from grader.check.state import State
from grader.cli import main
from grader.exercises import BY_NAME
from grader.paths import SOLUTIONS_DIR

# try's verdict read from the saved verdict
TOLD_BY_RECORD = ("fails on this input:", "on an input try could not keep")


def submission(folder: Path, module: str, source: str) -> Path:
    """The reference in folder, with this source in place of the module."""
    shutil.copytree(
        SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__", "__init__.py")
    )
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    return folder


def verdicts(folder: Path, exercise: str) -> dict[str, dict]:
    """Per function of the exercise: whether the check fails it, whether try does, and what try said.

    The check's verdict is saved for the folder as `grader check` saves the student's own, so try finds the input it kept.
    """
    report = run_checks(folder, [exercise])
    State(folder).save(report)
    (result,) = report.exercises
    found = {}
    for function in BY_NAME[exercise].functions:
        fails = any(
            check.functions.get(function) in ("failed", "error", "not_started")
            for check in result.checks
        )
        tried = CliRunner().invoke(main, ["try", exercise, function, "--submission", str(folder)])
        assert tried.exit_code in (0, 1), tried.output
        found[function] = {"check": fails, "try": tried.exit_code == 1, "output": tried.output}
    return found


def disagreements(found: dict[str, dict]) -> dict[str, str]:
    """The functions try and check disagree on, with what try said."""
    return {
        function: seen["output"] for function, seen in found.items() if seen["check"] != seen["try"]
    }
