"""print() in a student's function: its output on the failing example ends the message; `grader check --output` shows all."""

import re
import shutil

import pytest
from click.testing import CliRunner

from grader.check.runner import run_checks
from grader.cli import main
from grader.paths import SOLUTIONS_DIR

SHAPE_PRINTING_SOFTMAX = """import numpy as np


def softmax(x):
    print("x has shape", x.shape)
    e = np.exp(x)  # no shift: fails on large scores
    return e / e.sum(axis=-1, keepdims=True)
"""
CHATTY_SOFTMAX = SHAPE_PRINTING_SOFTMAX.replace(
    'print("x has shape", x.shape)', 'print("\\n".join(f"line {i}" for i in range(30)))'
)


def submission(tmp_path, softmax_source: str):
    folder = tmp_path / "work"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "softmax.py").write_text(softmax_source, encoding="utf-8")
    return folder


def test_a_failed_check_shows_what_the_function_printed_on_its_example(tmp_path):
    """The output shown is the failing example's own: the shape printed is the shape of the input shown."""
    report = run_checks(submission(tmp_path, SHAPE_PRINTING_SOFTMAX), ["softmax"], profile="quick")
    failed = [c for c in report.exercises[0].checks if c.status == "failed"]
    assert failed
    for check in failed:
        assert "What your code printed on this example:" in check.message, check.message
        shown = re.search(r"x = .*\(shape (\([\d, ]*\))\)", check.message)
        if shown:  # a drawn example: the only shape printed is the one the message shows
            printed = set(re.findall(r"x has shape (\([\d, ]*\))", check.message))
            assert printed == {shown.group(1)}, check.message


def test_long_output_is_cut_and_says_how_to_see_it_all(tmp_path):
    report = run_checks(submission(tmp_path, CHATTY_SOFTMAX), ["softmax"], profile="quick")
    message = next(c.message for c in report.exercises[0].checks if c.status == "failed")
    assert "line 10" in message and "line 29" not in message
    assert "more lines: `grader check softmax --output` shows everything it printed." in message


@pytest.mark.slow
def test_check_output_shows_everything_printed_check_by_check_passed_ones_too(tmp_path):
    folder = submission(
        tmp_path,
        SHAPE_PRINTING_SOFTMAX.replace("np.exp(x)", "np.exp(x - x.max(axis=-1, keepdims=True))"),
    )
    result = CliRunner().invoke(main, ["check", "softmax", "--submission", str(folder), "--output"])
    assert result.exit_code == 0, result.output
    section = result.output.split("What your code printed, check by check:")[1]
    assert (
        "softmax.rows_sum_to_one printed:" in section
        and "softmax: x has shape (16, 141, 141)" in section
    )
    plain = CliRunner().invoke(main, ["check", "softmax", "--submission", str(folder)])
    assert "x has shape" not in plain.output


@pytest.mark.slow
def test_a_failed_exercise_names_grader_try(tmp_path, monkeypatch):
    """In the student's own exercises/ try uses the kept input, in the terminal; another's folder keeps none and runs confined."""
    folder = submission(tmp_path, SHAPE_PRINTING_SOFTMAX)
    result = CliRunner().invoke(main, ["check", "softmax", "--submission", str(folder)])
    assert result.exit_code == 1
    assert re.search(
        r"Debug it: `[^`]*grader try softmax --submission \S+` runs these functions, confined, on a small worked example",
        result.output,
    )
    assert "breakpoint() work" not in result.output
    monkeypatch.chdir(tmp_path)
    own = folder.rename(tmp_path / "exercises")  # the student's own, beside where the grader runs
    result = CliRunner().invoke(main, ["check", "softmax", "--submission", str(own)])
    assert re.search(
        r"Debug it: `[^`]*grader try softmax` runs your functions on the input they last failed on",
        result.output,
    ), result.output
    assert "print() and breakpoint() work" in result.output
