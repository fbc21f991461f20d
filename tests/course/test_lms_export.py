"""`grader export` and `grader override`: the LMS's columns, one row per student, overrides kept with who, when and why."""

import csv
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from grader import outlet
from grader.cli import main
from grader.course import overrides
from grader.course.rows import COLUMNS
from grader.exercises import NAMES

ALL = "scores:passed masking:passed softmax:passed heads:passed training:passed"
ROWS = [
    {
        "student": "Ada Lovelace_1001_assignsubmission_file_",
        "student id": "1001",
        "student name": "Ada Lovelace",
        "status": "passed",
    }
    | dict(zip(NAMES, ("15.0", "15.0", "20.0", "20.0", "30.0")))
    | {"total": "100.0", "exercise statuses": ALL},
    {
        "student": "Bo Li_1002_assignsubmission_file_",
        "student id": "1002",
        "student name": "Bo Li",
        "status": "unreadable",
    }
    | {"total": "0.0", "reason": "No module of the exercise is in your submission."},
    {
        "student": "cy",
        "status": "graded",
        "total": "42.5",
        "reason": "heads failed: shares do not sum to 1",
    }
    | dict(zip(NAMES, ("15.0", "7.5", "20.0", "0.0", "0.0")))
    | {
        "exercise statuses": "scores:passed masking:failed softmax:passed heads:failed training:not_started",
        "failed checks": "heads.x",
    },
]


def grades(folder: Path, rows=ROWS) -> Path:
    path = folder / "grades.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(
            [{name: outlet.csv_cell(value) for name, value in row.items()} for row in rows]
        )
    return path


def run(*args) -> str:
    said = CliRunner().invoke(main, [str(a) for a in args])
    assert said.exit_code == 0, said.output
    return said.output


def table(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_canvas_gets_its_columns_each_student_by_canvas_id_and_the_empty_upload_with_0(tmp_path):
    said = run(
        "export",
        grades(tmp_path),
        "--to",
        "canvas",
        "--out",
        tmp_path / "canvas.csv",
        "--column",
        "Attention (4321)",
    )
    rows = table(tmp_path / "canvas.csv")
    assert rows[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "Attention (4321)",
    ]
    assert rows[1] == ["Points Possible", "", "", "", "", "100.0"]
    assert rows[2:] == [
        ["Ada Lovelace", "1001", "", "", "", "100.0"],
        ["Bo Li", "1002", "", "", "", "0.0"],
        ["cy", "", "", "", "", "42.5"],
    ]
    assert "1 student has no Canvas id" in said and "cy" in said


def test_canvas_takes_each_exercise_as_a_column_only_when_asked(tmp_path):
    run(
        "export",
        grades(tmp_path),
        "--to",
        "canvas",
        "--out",
        tmp_path / "canvas.csv",
        "--exercises",
    )
    rows = table(tmp_path / "canvas.csv")
    assert rows[0][5:] == ["Attention by Hand", *(f"Attention by Hand: {name}" for name in NAMES)]
    assert rows[1][5:] == ["100.0", "15.0", "15.0", "20.0", "20.0", "30.0"] and rows[4][5:] == [
        "42.5",
        "15.0",
        "7.5",
        "20.0",
        "0.0",
        "0.0",
    ]


def test_moodle_gets_its_grading_worksheet_with_the_participant_and_the_exercises_as_feedback(
    tmp_path,
):
    run("export", grades(tmp_path), "--to", "moodle", "--out", tmp_path / "moodle.csv")
    head, *rows = table(tmp_path / "moodle.csv")
    # what Moodle's upload requires
    assert {"Identifier", "Grade", "Last modified (grade)", "Feedback comments"} <= set(head)
    by = {row[head.index("Full name")]: dict(zip(head, row)) for row in rows}
    assert (
        by["Ada Lovelace"]["Identifier"] == "Participant 1001"
        and by["Ada Lovelace"]["Grade"] == "100.0"
    )
    assert (
        by["Bo Li"]["Grade"] == "0.0"
        and "No module of the exercise" in by["Bo Li"]["Feedback comments"]
    )
    assert by["cy"]["Feedback comments"].startswith(
        "scores 15.0/15 · masking 7.5/15 · softmax 20.0/20 · heads 0.0/20"
    )


def test_the_kits_own_table_has_the_id_the_name_and_each_exercise(tmp_path):
    run("export", grades(tmp_path), "--out", tmp_path / "plain.csv")
    head, *rows = table(tmp_path / "plain.csv")
    assert head == ["student id", "student name", "student", *NAMES, "total", "status", "reason"]
    assert rows[1] == [
        "1002",
        "Bo Li",
        "Bo Li_1002_assignsubmission_file_",
        *["0.0"] * 6,
        "unreadable",
        ROWS[1]["reason"],
    ]


def test_an_override_is_set_logged_with_who_when_why_and_applied_again_on_export(tmp_path):
    path = grades(tmp_path)
    said = run(
        "override",
        path,
        "cy",
        "heads",
        "12",
        "--why",
        "the plot was right, graded by hand",
        "--by",
        "prof",
    )
    assert "heads set to 12.0 by prof" in said
    (entry,) = overrides.read(tmp_path / "grades.overrides.csv")
    assert (
        entry["who"] == "prof"
        and entry["before"] == "0.0"
        and entry["why"] == "the plot was right, graded by hand"
    )
    assert entry["when"][:4].isdigit() and entry["student"] == "cy"
    row = next(r for r in csv.DictReader(path.open(encoding="utf-8")) if r["student"] == "cy")
    assert (row["heads"], row["total"]) == ("12.0", "54.5") and row["reason"].startswith(
        "heads set to 12.0 by prof"
    )
    run("export", path, "--out", tmp_path / "plain.csv")
    # once, not twice
    assert table(tmp_path / "plain.csv")[3][3:9] == ["15.0", "7.5", "20.0", "12.0", "0.0", "54.5"]


def test_an_override_by_the_lms_id_and_one_out_of_range_or_without_why_or_of_no_one(tmp_path):
    path = grades(tmp_path)
    run("override", path, "1002", "scores", "5", "--why", "emailed the file in time")
    assert table(path)[2][COLUMNS.index("total")] == "5.0"
    for args, words in (
        (["cy", "heads", "21", "--why", "x"], "heads is worth 0 to 20 points, not 21"),
        (["cy", "heads", "2", "--why", " "], "say why with --why"),
        (["cx", "heads", "2", "--why", "x"], "Did you mean 'cy'"),
    ):
        said = CliRunner().invoke(main, ["override", str(path), *args])
        assert said.exit_code == 2 and words in said.output


@pytest.mark.slow
@pytest.mark.nbgrader
def test_overrides_on_a_gradebook_apply_at_export(tmp_path, monkeypatch):
    api = pytest.importorskip("nbgrader.api")
    # nbgrader runs alembic
    monkeypatch.setenv(
        "PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    )
    book = tmp_path / "gradebook.db"
    with api.Gradebook(f"sqlite:///{book}") as gb:
        gb.add_assignment("attention-by-hand")
        gb.add_notebook("attention-by-hand", "attention-by-hand")
        points = {"scores": 15, "masking": 15, "softmax": 20, "heads": 20, "training": 30}
        for name, most in points.items():
            gb.add_grade_cell(
                f"test_{name}",
                "attention-by-hand",
                "attention-by-hand",
                max_score=most,
                cell_type="code",
            )
        gb.add_student("1001", first_name="Ada", last_name="Lovelace")
        gb.add_student("1002", first_name="Bo", last_name="Li")  # no submission
        gb.add_submission("attention-by-hand", "1001")
        for name, most in points.items():
            grade = gb.find_grade(f"test_{name}", "attention-by-hand", "attention-by-hand", "1001")
            grade.auto_score = most if name != "heads" else 4.0
        gb.db.commit()
    run("override", book, "Ada Lovelace", "heads", "20", "--why", "regraded")
    run("export", book, "--to", "moodle", "--out", tmp_path / "moodle.csv")
    head, *rows = table(tmp_path / "moodle.csv")
    by = {row[0]: dict(zip(head, row)) for row in rows}
    assert (
        by["Participant 1001"]["Grade"] == "100.0"
        and "heads set to 20.0 by" in by["Participant 1001"]["Feedback comments"]
    )
    assert (
        by["Participant 1002"]["Grade"] == "0.0"
        and "no submission" in by["Participant 1002"]["Feedback comments"]
    )
    assert by["Participant 1001"]["Full name"] == "Ada Lovelace"


TEXT = st.text(st.characters(codec="utf-8"), max_size=12)


@given(name=TEXT, reason=TEXT, why=TEXT.filter(str.strip))
@example(name="-0", reason="", why="0")  # found by Hypothesis: a name click took for an option
def test_no_cell_of_an_export_or_the_log_is_one_a_spreadsheet_runs(
    tmp_path_factory, name, reason, why
):
    folder = tmp_path_factory.mktemp("hostile")
    path = grades(
        folder, [ROWS[2] | {"student": name or "x", "student name": name, "reason": reason}]
    )
    assert (
        CliRunner()
        .invoke(main, ["override", "--why", why, "--", str(path), name or "x", "heads", "3"])
        .exit_code
        == 0
    )
    for to in ("canvas", "moodle", "csv"):
        run("export", path, "--to", to, "--out", folder / f"{to}.csv")
        cells = [cell for row in table(folder / f"{to}.csv") for cell in row]
        cells += [
            cell
            for entry in overrides.read(folder / "grades.overrides.csv")
            for cell in entry.values()
        ]
        assert not [
            cell
            for cell in cells
            for line in cell.split("\n")
            if line.lstrip()[:1] in outlet.FORMULA
        ]


@given(
    st.dictionaries(
        st.sampled_from(NAMES), st.floats(0, 15).map(lambda p: round(p * 2) / 2), min_size=1
    )
)
def test_settling_a_row_twice_changes_nothing_more(points):
    entries = [{"kind": "override", "student": "cy", "exercise": e, "points": f"{p:.1f}", "who": "w", "when": "2025-01-01", "why": "y"}
               for e, p in points.items()]  # fmt: skip
    once = overrides.settle_row(ROWS[2], entries)
    assert overrides.settle_row(once, entries) == once
    assert float(once["total"]) == pytest.approx(sum(float(once.get(name) or 0) for name in NAMES))
