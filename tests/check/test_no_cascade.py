"""No cascade: an earlier module that hangs, waits for input or imports slowly at import costs its own exercise alone.

In the full kit heads and training run with the reference scores, masking and softmax in place, and
the student's files of those are never imported there: whatever masking.py does at import, heads and
training score in full, by `grader check`, `grader batch` and nbgrader's autograde alike.
"""

import csv
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.check.runner import run_checks
from grader.cli import main
from grader.course.nbgrader.autograde import grade
from grader.paths import SOLUTIONS_DIR

AT_IMPORT = {  # what masking.py does before the reference's code
    "hangs": "while True:\n    pass\n",
    "waits_for_input": "name = input('your name? ')\n",
    "imports_slowly": "import time\n\n_until = time.process_time() + 6\nwhile time.process_time() < _until:\n    pass\n",
}
FULL = {"scores": 15.0, "softmax": 20.0, "heads": 20.0, "training": 30.0}


def submission(root: Path, case: str) -> Path:
    """The reference, with masking.py doing the case's thing at import."""
    folder = root / case
    folder.mkdir()
    for path in SOLUTIONS_DIR.glob("*.py"):
        if path.name != "__init__.py":
            shutil.copy(path, folder / path.name)
    (folder / "masking.py").write_text(AT_IMPORT[case] + (SOLUTIONS_DIR / "masking.py").read_text())
    return folder


def assert_no_cascade(points: dict) -> None:
    """masking scores nothing; every other exercise scores in full."""
    assert points["masking"] == 0.0, points
    assert {name: points[name] for name in FULL} == FULL, points


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(AT_IMPORT))
def test_grader_check_costs_masking_alone(case, tmp_path):
    report = run_checks(submission(tmp_path, case), timeout=2.0)
    by_name = {result.name: result for result in report.exercises}
    assert_no_cascade({name: result.points for name, result in by_name.items()})
    assert by_name["masking"].status == "error"
    for later in ("heads", "training"):
        assert by_name[later].status == "passed"
        assert (
            "passes with the reference masking in place, so fix masking first"
            in by_name[later].note
        )


@pytest.mark.slow
def test_grader_batch_costs_masking_alone(tmp_path):
    csv_file = tmp_path / "grades.csv"
    folder = submission(tmp_path, "hangs")
    result = CliRunner().invoke(main, ["batch", str(folder), "--csv", str(csv_file), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    with csv_file.open(newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["status"] == "graded", row
    assert_no_cascade({name: float(row[name]) for name in ("masking", *FULL)})


@pytest.mark.slow
def test_nbgrader_autograde_costs_masking_alone(tmp_path):
    folder = submission(tmp_path, "hangs")
    graded = grade({path.stem: path.read_bytes() for path in folder.glob("*.py")})
    assert_no_cascade(graded["points"])
    assert "did not finish" in graded["texts"]["masking"]


def test_a_name_imported_from_a_module_the_reference_stands_in_for_is_named(tmp_path):
    folder = submission(tmp_path, "hangs")
    (folder / "masking.py").write_text(
        (SOLUTIONS_DIR / "masking.py").read_text() + "\nHIDDEN = -1e9\n"
    )
    heads = (SOLUTIONS_DIR / "heads.py").read_text()
    (folder / "heads.py").write_text(
        heads.replace(
            "from .masking import apply_causal_mask",
            "from .masking import HIDDEN, apply_causal_mask",
        )
    )
    (result,) = run_checks(folder, exercises=["heads"]).exercises
    assert result.status == "error" and not result.cause, result.note
    message = result.checks[0].message
    assert "your heads.py cannot be imported" in message
    assert (
        "HIDDEN cannot be imported from your masking.py here: the reference stands in for your masking.py"
        in message
    )
