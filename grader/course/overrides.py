"""The grades' log: every manual override and every regrade, with who, when and why, kept beside the grades.

`grader override GRADES STUDENT EXERCISE POINTS --why TEXT` records an override in GRADES.overrides.csv
(grades.csv's is grades.overrides.csv, gradebook.db's gradebook.overrides.csv) and, on a batch CSV, sets
the row at once. The log is only ever appended to. The latest override of a student's exercise is
applied to that student's row every time one is written (a rerun that regrades them too) and to every
export: it sets the exercise's points, and the total moves by as much. `grader batch` records each
regrade of a student who had a row, from what to what and why. Every cell leaves through outlet.csv_cell.
"""

import csv
import datetime
import getpass
import os
import threading
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from grader import outlet
from grader.course.class_rows import Student
from grader.exercises import BY_NAME

COLUMNS = ("when", "who", "kind", "student", "exercise", "points", "before", "why")
LOCK = threading.Lock()  # batch's threads record regrades into one log


def log_of(grades: Path) -> Path:
    """The log beside the grades: grades.csv -> grades.overrides.csv."""
    grades = Path(grades)
    return grades.with_name(f"{grades.stem}.overrides.csv")


def who() -> str:
    """The instructor's user name on this machine, as the log's default who."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"


def now() -> str:
    return datetime.datetime.now(datetime.UTC).astimezone().isoformat(timespec="seconds")


def read(log: Path) -> list[dict]:
    """Every entry of the log, oldest first; none when there is no log."""
    try:
        with Path(log).open(newline="", encoding="utf-8") as f:
            return [dict(entry) for entry in csv.DictReader(f) if entry.get("student")]
    except FileNotFoundError:
        return []


def record(log: Path, told: dict) -> dict:
    """Append one entry (kind, student, exercise, points, before, why; who and when filled in unless told) to the log, its
    header first when it is new, flushed to disk; the entry as written."""
    entry = {"when": now(), "who": told.get("who") or who()} | {
        name: told.get(name, "") for name in COLUMNS[2:]
    }
    entry = {name: outlet.csv_cell(str(value)) for name, value in entry.items()}
    with LOCK, Path(log).open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        if f.tell() == 0:
            writer.writeheader()
        writer.writerow(entry)
        f.flush()
        os.fsync(f.fileno())
    return entry


def latest(entries: list[dict]) -> dict[str, dict[str, dict]]:
    """student -> exercise -> the latest override of it."""
    found: dict[str, dict[str, dict]] = {}
    for entry in entries:
        if entry.get("kind") == "override" and entry.get("exercise") in BY_NAME:
            found.setdefault(entry["student"], {})[entry["exercise"]] = entry
    return found


def number(text) -> float:
    try:
        return float(text or 0)
    except ValueError:
        return 0.0


def said(entry: dict) -> str:
    """An override in the words a row's reason and a student's feedback give it."""
    return f"{entry['exercise']} set to {entry['points']} by {entry['who']} on {entry['when'][:10]}: {entry['why']}"


def settle_row(row: dict, entries: list[dict]) -> dict:
    """A batch row with its student's latest overrides applied: each exercise's cell set, the total moved, the reason saying so.

    A row that already holds an override is left as it is, so settling twice changes nothing.
    """
    mine = latest(entries).get(row.get("student", ""), {})
    changed = dict(row)
    notes = []
    for exercise, entry in mine.items():
        before, after = number(row.get(exercise)), number(entry["points"])
        if row.get(exercise) and before == after:
            continue
        changed[exercise] = f"{after:.1f}"
        changed["total"] = f"{number(changed.get('total')) + after - before:.1f}"
        notes.append(said(entry))
    if notes:
        reason = "; ".join([*notes, *([row["reason"]] if row.get("reason") else [])])
        changed["reason"] = outlet.csv_cell(reason)
    return changed


def applied(students: list[Student], log: Path) -> list[Student]:
    """The students with the latest overrides of the log applied (those a batch CSV holds already stay as they are)."""
    overrides = latest(read(log))
    settled = []
    for student in students:
        points, total, notes = dict(student.points), student.total, []
        for exercise, entry in overrides.get(student.id, {}).items():
            after = number(entry["points"])
            if exercise in points and points[exercise] == after:
                continue
            total += after - points.get(exercise, 0.0)
            points[exercise] = after
            notes.append(said(entry))
        reason = "; ".join([*notes, *([student.reason] if student.reason else [])])
        settled.append(
            replace(student, points=points, total=max(total, 0.0), reason=reason)
            if notes
            else student
        )
    return settled


class Decision(NamedTuple):
    """Why an override was made, who made it (default: the user's name), and the assignment of an nbgrader gradebook."""

    why: str
    by: str = ""
    assignment: str = "attention-by-hand"


def override(grades: Path, student: str, exercise: str, points: float, decision: Decision) -> int:
    """`grader override`: record an override of one student's exercise, and set it in a batch CSV; 0 done, 2 refused."""
    import click

    from grader.course import class_rows
    from grader.course.errors import ReportError

    why, by, assignment = decision
    most = BY_NAME[exercise].points
    if not 0 <= points <= most:
        click.echo(
            f"Cannot override: {exercise} is worth 0 to {most:g} points, not {points:g}.", err=True
        )
        return 2
    if not why.strip():
        click.echo(
            "Cannot override without a reason: say why with --why, for the log and the student's feedback.",
            err=True,
        )
        return 2
    try:
        students, kind = class_rows.read(Path(grades), assignment)
    except ReportError as error:
        click.echo(f"Cannot override: {error}.", err=True)
        return 2
    found, problem = whose(students, student)
    if found is None:
        click.echo(f"Cannot override: {problem}", err=True)
        return 2
    before = f"{found.points[exercise]:.1f}" if exercise in found.points else ""
    told = {
        "kind": "override",
        "student": found.id,
        "exercise": exercise,
        "points": f"{points:.1f}",
        "before": before,
    }
    entry = record(log_of(Path(grades)), told | {"why": why.strip(), "who": by})
    shown = outlet.terminal(found.id)
    click.echo(
        f"Recorded in {log_of(Path(grades))}: {outlet.terminal(said(entry))} ({shown}; it was {before or 'not graded'})."
    )
    if kind == "batch":
        set_in_csv(Path(grades), found.id)
        click.echo(
            f"Set in {grades}; every rerun of grader batch and every grader export applies it again."
        )
    else:
        click.echo(
            "nbgrader's gradebook is left as it is: grader export applies the override (the formgrader's manual grade changes nbgrader's own)."
        )
    return 0


def whose(students: list[Student], given: str) -> tuple[Student | None, str]:
    """The one student a name given on the command line names (the row's student cell, the LMS's id, or the name), or why none."""
    for field in ("id", "lms_id", "name"):
        matches = [
            s
            for s in students
            if getattr(s, field) and getattr(s, field) in (given, outlet.csv_cell(given))
        ]
        if len(matches) == 1:
            return matches[0], ""
        if len(matches) > 1:
            return (
                None,
                f"{len(matches)} students have the {field.replace('_', ' ')} {outlet.terminal(given)!r}: give the student cell instead.",
            )
    import difflib

    near = difflib.get_close_matches(
        given, [s.id for s in students] + [s.name for s in students if s.name], n=3, cutoff=0.5
    )
    hint = f" Did you mean {', '.join(repr(outlet.terminal(n)) for n in near)}?" if near else ""
    return (
        None,
        f"no student {outlet.terminal(given)!r} in the grades: give the student cell, the student id or the name as written.{hint}",
    )


def set_in_csv(grades: Path, student: str) -> None:
    """Settle the student's row of a batch CSV with the log, rewriting the CSV in one step."""
    with grades.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = list(reader.fieldnames or []), list(reader)
    entries = read(log_of(grades))
    rows = [settle_row(row, entries) if row.get("student") == student else row for row in rows]
    temporary = grades.with_name(f".{grades.name}.{os.getpid()}.tmp")
    with temporary.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(temporary, grades)
