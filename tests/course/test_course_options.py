"""Course settings by option: nbgrader's course id and exchange, and all-or-nothing points in every route."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.check.results import ALL_OR_NOTHING, SCORING_VAR, CheckResult, partial_points
from grader.cli import main
from grader.course import gradescope
from grader.course.nbgrader import assignment
from grader.exercises import BY_NAME
from grader.paths import MODULES, SOLUTIONS_DIR

NAIVE_SOFTMAX = '''
import numpy as np


def softmax(x):
    """Softmax without subtracting the row's maximum: overflows for large scores."""
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)
'''


@pytest.fixture
def no_kit(monkeypatch):
    """grader nbgrader without writing the student's kit (grader release has tests of its own)."""
    monkeypatch.setattr(
        assignment,
        "write_student_kit",
        lambda target: "The student's kit: not written in this test.",
    )


@pytest.mark.nbgrader  # reads the course's settings through traitlets
def test_nbgrader_takes_the_course_id_and_the_exchange(tmp_path, no_kit):
    exchange = tmp_path / "hub-exchange"
    said = CliRunner().invoke(
        main,
        ["nbgrader", str(tmp_path / "course"), "--course-id", "ml101", "--exchange", str(exchange)],
    )
    assert said.exit_code == 0, said.output
    for config in (
        tmp_path / "course" / "nbgrader_config.py",
        tmp_path / "course" / "for-students" / "nbgrader_config.py",
    ):
        text = config.read_text(encoding="utf-8")
        assert (
            "c.CourseDirectory.course_id = 'ml101'" in text
            and f"c.Exchange.root = {str(exchange)!r}" in text
        )
    assert "course ml101" in said.output


@pytest.mark.parametrize(
    "option, value", [("--course-id", "ml 101"), ("--exchange", "relative/exchange")]
)
def test_nbgrader_refuses_a_course_id_or_exchange_nbgrader_cannot_use(
    tmp_path, no_kit, option, value
):
    said = CliRunner().invoke(main, ["nbgrader", str(tmp_path / "course"), option, value])
    assert (
        said.exit_code == 2
        and value in said.output
        and not (tmp_path / "course" / "nbgrader_config.py").exists()
    )


def test_nbgrader_writes_all_or_nothing_into_the_config(tmp_path, no_kit):
    assert CliRunner().invoke(main, ["nbgrader", str(tmp_path / "a")]).exit_code == 0
    assert (
        CliRunner().invoke(main, ["nbgrader", str(tmp_path / "b"), "--all-or-nothing"]).exit_code
        == 0
    )
    assert "c.GradeModules.all_or_nothing = False" in (
        tmp_path / "a" / "nbgrader_config.py"
    ).read_text(encoding="utf-8")
    assert "c.GradeModules.all_or_nothing = True" in (
        tmp_path / "b" / "nbgrader_config.py"
    ).read_text(encoding="utf-8")


def checks(passed: int, failed: int) -> list[CheckResult]:
    """Check results, so many passed and so many failed."""
    given = [(f"x.c{n}", "passed") for n in range(passed)] + [
        (f"x.f{n}", "failed") for n in range(failed)
    ]
    return [CheckResult(name, status, functions={"softmax": status}) for name, status in given]


def test_points_are_partial_unless_the_course_chose_all_or_nothing(monkeypatch):
    monkeypatch.delenv(SCORING_VAR, raising=False)
    softmax = BY_NAME["softmax"]  # 20 points, one function
    assert (
        partial_points(softmax, checks(3, 1)) == 15.0
        and partial_points(softmax, checks(4, 0)) == 20.0
    )
    monkeypatch.setenv(SCORING_VAR, ALL_OR_NOTHING)
    assert (
        partial_points(softmax, checks(3, 1)) == 0.0
        and partial_points(softmax, checks(4, 0)) == 20.0
    )


def test_the_gradescope_zip_carries_all_or_nothing(tmp_path):
    out = tmp_path / "a.zip"
    assert CliRunner().invoke(main, ["gradescope", str(out), "--all-or-nothing"]).exit_code == 0
    with zipfile.ZipFile(out) as archive:
        chosen = json.loads(archive.read(gradescope.SETTINGS))
    assert chosen == {"all_or_nothing": True, "hidden": "after_published"}
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / gradescope.SETTINGS).write_text(json.dumps(chosen))
    assert gradescope.settings(tmp_path) == chosen
    assert gradescope.settings(tmp_path / "nowhere") == {
        "all_or_nothing": False,
        "hidden": "after_published",
    }


def naive_submission(folder: Path) -> Path:
    """The reference with a softmax that overflows: it keeps part of its points unless all or nothing."""
    folder.mkdir(parents=True)
    for name in MODULES:
        (folder / f"{name}.py").write_text(
            (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8"), encoding="utf-8"
        )
    (folder / "softmax.py").write_text(NAIVE_SOFTMAX, encoding="utf-8")
    return folder


@pytest.mark.slow
@pytest.mark.linux("grader batch grades on Linux")
def test_every_route_honours_all_or_nothing(tmp_path, monkeypatch):
    from grader.course.nbgrader.autograde import grade, scoring

    monkeypatch.delenv(SCORING_VAR, raising=False)
    folder = naive_submission(tmp_path / "naive")
    points = {}
    for how, extra in (("partial", []), ("all", ["--all-or-nothing"])):
        csv_file = tmp_path / f"{how}.csv"
        command = [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(folder),
            "--csv",
            str(csv_file),
            "--allow-unisolated",
            *extra,
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        row = csv_file.read_text(encoding="utf-8").splitlines()[1].split(",")
        header = csv_file.read_text(encoding="utf-8").splitlines()[0].split(",")
        points[("batch", how)] = float(row[header.index("softmax")])
        files = {name: (folder / f"{name}.py").read_bytes() for name in MODULES}
        with scoring(how == "all"):
            points[("nbgrader", how)] = grade(files)["points"]["softmax"]
    assert 0 < points[("batch", "partial")] < 20 and points[("batch", "all")] == 0.0
    assert (
        points[("nbgrader", "partial")] == points[("batch", "partial")]
        and points[("nbgrader", "all")] == 0.0
    )
