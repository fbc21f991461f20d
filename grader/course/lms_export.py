"""`grader export SOURCE --to canvas|moodle|csv`: the grades in the columns an LMS imports, from a batch CSV or nbgrader's gradebook.

Canvas's gradebook import matches a row by its `ID` (the Canvas user id, which Canvas's submissions
download puts in each file's name) and takes each column after `Section` as an assignment, created
if no column of Canvas's is named so: the kit writes the total under one column, and each exercise
as a column of its own only when asked. Moodle's assignment takes its offline grading worksheet
(Upload grading worksheet): a row is matched by `Identifier`, "Participant" and the id Moodle's
download puts in each folder's name; `Grade`, `Last modified (grade)` (a grade changed in Moodle
since then is not replaced) and `Feedback comments`, where the kit writes each exercise's points and
why it did not pass. `csv` is the kit's own table: id, name, each exercise's points, total, reason.

Every student is one row, a student with no upload or an unreadable one too: 0 points and the reason.
Overrides recorded beside the source (grader/course/overrides.py) are applied first. Every cell leaves
through grader.outlet.csv_cell.
"""

import csv
from pathlib import Path
from typing import NamedTuple

import click

from grader import outlet
from grader.course import class_rows, overrides
from grader.course.class_rows import Student
from grader.course.errors import ReportError
from grader.exercises import BY_NAME, EXERCISES, NAMES

FORMATS = ("canvas", "moodle", "csv")
MAX_POINTS = sum(exercise.points for exercise in EXERCISES)
# then one column per assignment (Canvas's export)
CANVAS_HEAD = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_HEAD = (
    "Identifier",
    "Full name",
    "Grade",
    "Maximum Grade",
    "Grade can be changed",
    "Last modified (grade)",
    "Feedback comments",
)
MOODLE_PARTICIPANT = "Participant "  # Moodle's own word before the id in the worksheet's Identifier
STATUS_WORDS = {"not_started": "not started", "failed": "failed", "error": "did not run"}


class Columns(NamedTuple):
    """Canvas's: the assignment's column, as Canvas's export names it, and whether each exercise is a column of its own too."""

    column: str = "Attention by Hand"
    exercises: bool = False


def export(
    source: Path,
    to: str = "csv",
    out: Path = Path("lms.csv"),
    assignment: str = "attention-by-hand",
    columns: "Columns | None" = None,
) -> int:
    """Write out in the LMS's columns; 0 when written, 2 when the source cannot be read or out cannot be written."""
    try:
        students, _ = class_rows.read(Path(source), assignment)
        students = overrides.applied(students, overrides.log_of(Path(source)))
    except ReportError as error:
        click.echo(f"Cannot export: {error}.", err=True)
        return 2
    table = TABLES[to](students, *(columns or Columns()))
    try:
        write(Path(out), table)
    except OSError as error:
        click.echo(
            f"Cannot write {out}: {error.strerror}. Choose a file in a folder that exists and that you may write to.",
            err=True,
        )
        return 2
    click.echo(said(students, to, Path(out)))
    return 0


def reason(student: Student) -> str:
    """Why a student has fewer than all the points: their row's reason, or the exercises that did not pass."""
    if student.reason:
        return student.reason
    if student.folder is not None and not (student.folder / "exercises").is_dir():
        return "the submission holds no exercises/ folder, so none of the five modules was graded"
    missing = [
        f"{name} {STATUS_WORDS.get(status, status)}"
        for name, status in student.statuses.items()
        if status != "passed"
    ]
    return "; ".join(missing)


def points(value: float) -> str:
    return f"{value:.1f}"


def exercise_points(student: Student) -> str:
    """Each exercise's points out of its own, in one line: "scores 15.0/15 · masking 7.5/15 · ..."."""
    return " · ".join(
        f"{name} {points(student.points.get(name, 0.0))}/{BY_NAME[name].points:g}" for name in NAMES
    )


def plain(students: list[Student], column: str = "", exercises: bool = True) -> list[list[str]]:
    """The kit's table: the LMS's id, the name, the key the grading used, each exercise's points, total, status, reason."""
    rows = [["student id", "student name", "student", *NAMES, "total", "status", "reason"]]
    for s in students:
        each = [points(s.points.get(name, 0.0)) for name in NAMES]
        rows.append([s.lms_id, s.name, s.id, *each, points(s.total), s.status, reason(s)])
    return rows


def canvas(students: list[Student], column: str, exercises: bool = False) -> list[list[str]]:
    """Canvas's gradebook import: the student's columns, the total under `column`, each exercise too when asked."""
    extra = [f"{column}: {name}" for name in NAMES] if exercises else []
    possible = [points(MAX_POINTS), *(f"{BY_NAME[name].points:.1f}" for name in NAMES)][
        : 1 + len(extra)
    ]
    rows = [[*CANVAS_HEAD, column, *extra], ["Points Possible", "", "", "", "", *possible]]
    for s in students:
        each = [points(s.points.get(name, 0.0)) for name in NAMES] if exercises else []
        rows.append([s.name or s.id, s.lms_id, "", "", "", points(s.total), *each])
    return rows


def moodle(students: list[Student], column: str = "", exercises: bool = False) -> list[list[str]]:
    """Moodle's offline grading worksheet: Identifier, grade, the time it was made, and the exercises' points as feedback."""
    now = overrides.now()  # ISO 8601 with its offset, which strtotime reads
    rows = [list(MOODLE_HEAD)]
    for s in students:
        identifier = MOODLE_PARTICIPANT + s.lms_id if s.lms_id else ""
        feedback = exercise_points(s) + (f". {reason(s)}" if reason(s) else "")
        rows.append(
            [identifier, s.name or s.id, points(s.total), points(MAX_POINTS), "Yes", now, feedback]
        )
    return rows


TABLES = {"csv": plain, "canvas": canvas, "moodle": moodle}


def write(out: Path, table: list[list[str]]) -> None:
    """The table as UTF-8 CSV, every cell through outlet.csv_cell."""
    with out.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([[outlet.csv_cell(cell) for cell in row] for row in table])


def said(students: list[Student], to: str, out: Path) -> str:
    """What was written, and the rows the LMS cannot match (no id from the route), by name."""
    line = f"Wrote {len(students)} student{'' if len(students) == 1 else 's'} to {out} ({to})."
    if to == "csv":
        return line
    lms = "Canvas" if to == "canvas" else "Moodle"
    unknown = [outlet.terminal(s.id) for s in students if not s.lms_id]
    if unknown:
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        line += (
            f"\n{len(unknown)} {'student has' if len(unknown) == 1 else 'students have'} no {lms} id, since their uploads were not named as {lms}'s download names them, so {lms} "
            f"cannot match their rows: {', '.join(unknown[:10])}{more}. Fill in their "
            f"{'ID' if to == 'canvas' else 'Identifier'} before the import."
        )
    return line
