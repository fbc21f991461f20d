"""A right answer made float64 from float32 input passes, with a note on what it costs the comparison; a failure's message notes it too."""

import shutil

import numpy as np
import pytest

from grader.check.checks.harness import CheckFailed, fail
from grader.check.report import render
from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

NOTE = "Your result is float64 from float32 input: not wrong, but `grader compare` runs its model in float32"


@pytest.mark.slow
def test_np_sqrt_passes_scores_with_the_note(tmp_path):
    folder = tmp_path / "s"
    shutil.copytree(
        SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__", "__init__.py")
    )
    scores = folder / "scores.py"
    scores.write_text(scores.read_text().replace("/ math.sqrt(d)", "/ np.sqrt(d)"))
    report = run_checks(folder, ["scores"])
    (result,) = report.exercises
    assert result.status == "passed" and result.points == result.max_points
    noted = [check for check in result.checks if NOTE in check.message]
    assert noted and all(check.status == "passed" for check in noted)
    # float32 kept: no note
    assert all(
        check.message == "" for check in run_checks(SOLUTIONS_DIR, ["scores"]).exercises[0].checks
    )
    shown = render(report, folder)
    assert f"scores: attention_scores: {NOTE}" in shown and "np.sqrt(d)" in shown


def test_a_failure_on_float32_input_made_float64_says_so_too():
    x = np.ones((1, 2), np.float32)
    with pytest.raises(CheckFailed) as failed:
        fail(
            "softmax is not what it should be.",
            {"x": x},
            np.full((1, 2), 0.5, np.float32),
            np.ones((1, 2)),
        )
    assert NOTE in str(failed.value)
    with pytest.raises(CheckFailed) as failed:  # float64 input: nothing widened
        fail(
            "softmax is not what it should be.",
            {"x": x.astype(float)},
            np.full((1, 2), 0.5),
            np.ones((1, 2)),
        )
    assert NOTE not in str(failed.value)
