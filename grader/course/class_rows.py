"""The class as `grader report` reads it: one Student per row of a `grader batch` CSV, or per student of nbgrader's gradebook.

All the report knows of the CSV's columns is here (row_student), so a change of batch's rows is made
in one place: a row's id is its `id` cell when the CSV has one, else its `student` cell; its name the
`name` cell, if any. A row's folder is found on disk from its cell, which names it as text (a name
that was not UTF-8 written with its bytes escaped); a folder not found is kept, and said so, never
left out. From nbgrader's gradebook, each graded cell's score is an exercise's points (so an nbgrader
course needs no second grading); a module that is still the stub is "not started".
"""

import csv
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader import outlet
from grader.course.errors import ReportError
from grader.course.stubs import stub_source
from grader.exercises import BY_NAME, NAMES

ESCAPES = (  # how a folder cell writes a name: outlet.name's escapes (one to one), then rows.shown's (bytes not UTF-8 only)
    re.compile(r"\\(\\|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})"),
    re.compile(r"\\(x[89a-fA-F][0-9a-fA-F])"),
)
# where nbgrader keeps a student's files: COURSE/STEP/STUDENT/ASSIGNMENT
NBGRADER_FOLDERS = ("submitted", "autograded")


@dataclass
class Student:
    """One student of the class as the report counts them."""

    id: str
    name: str = ""
    status: str = ""  # the batch row's: passed, graded, unreadable, timeout, error, fault; missing for no submission
    total: float = 0.0
    points: dict[str, float] = field(default_factory=dict)  # exercise -> points, for a graded row
    # exercise -> passed, failed, not_started, error
    statuses: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # ids of the checks that failed
    mistakes: list[str] = field(default_factory=list)  # the known mistakes named
    seconds: float = 0.0
    reason: str = ""
    folder: Path | None = None  # the submission's folder, when it is there
    shown: str = ""  # the folder as the report shows it
    penalty: float = (
        0.0  # points nbgrader took off for lateness (its gradebook's), already out of total
    )
    lms_id: str = ""  # the id the LMS knows the student by (Moodle's participant, Canvas's user, nbgrader's id), where the route gave it

    @property
    def graded(self) -> bool:
        return self.status in ("passed", "graded")


def number(text) -> float:
    try:
        return float(text or 0)
    except ValueError:
        return 0.0


def unescaped(cell: str, escape: re.Pattern) -> bytes:
    """The bytes of a name written with the escapes escape matches: \\\\ a backslash, \\xNN a byte, \\uNNNN a character."""

    def one(match: re.Match) -> bytes:
        code = match.group(1)
        if code == "\\":
            return b"\\"
        value = int(code[1:], 16)
        return bytes([value]) if code[0] == "x" else chr(value).encode("utf-8", "surrogatepass")

    out, at = b"", 0
    for match in escape.finditer(cell):
        out += cell[at : match.start()].encode("utf-8", "surrogateescape") + one(match)
        at = match.end()
    return out + cell[at:].encode("utf-8", "surrogateescape")


def found(cell: str, base: Path) -> Path | None:
    """The folder a row's cell names, if it is there: its escapes undone, or as written (a spreadsheet's apostrophe dropped)."""
    texts = [cell, cell[1:]] if cell.startswith("'") else [cell]
    for text in texts:
        for raw in (*(unescaped(text, escape) for escape in ESCAPES), os.fsencode(text)):
            path = Path(os.fsdecode(raw))
            for candidate in (path,) if path.is_absolute() else (base / path, path):
                if candidate.is_dir() and not candidate.is_symlink():
                    return candidate
    return None


def row_student(row: dict, base: Path) -> Student:
    """A Student from a batch CSV row, today's columns or with an `id` and a `name` of their own."""
    cell = row.get("folder") or ""
    folder = found(cell, base) if cell else None
    statuses = dict(
        pair.partition(":")[::2] for pair in (row.get("exercise statuses") or "").split()
    )
    return Student(
        id=row.get("id") or row.get("student") or cell,
        name=row.get("name") or row.get("student name") or "",
        lms_id=row.get("student id") or row.get("id") or "",
        status=row.get("status") or "",
        total=number(row.get("total")),
        points={name: number(row[name]) for name in NAMES if row.get(name)},
        statuses={name: status for name, status in statuses.items() if name in NAMES},
        failed=(row.get("failed checks") or "").split(),
        mistakes=[m for m in (row.get("mistakes") or "").split("; ") if m],
        seconds=number(row.get("seconds")),
        reason=row.get("reason") or "",
        folder=folder,
        shown=outlet.name(os.fsencode(folder)) if folder is not None else cell,
    )


def from_csv(csv_file: Path) -> list[Student]:
    """The students of a `grader batch` CSV."""
    try:
        with Path(csv_file).open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ReportError(
            f"cannot read {csv_file} ({error}): give the CSV that `grader batch --csv` wrote"
        ) from None
    if not rows or "failed checks" not in rows[0]:
        raise ReportError(
            f"{csv_file} has no rows with a 'failed checks' column, so `grader batch` of this kit did not write it (nbgrader's "
            "export has no checks): for an nbgrader course, give its gradebook.db instead"
        )
    base = Path(csv_file).resolve().parent
    return [row_student(row, base) for row in rows]


def stub_digest(exercise: str) -> bytes:
    return hashlib.sha256(stub_source(exercise).encode("utf-8")).digest()


def gradebook_student(gradebook, assignment: str, student, course: Path) -> Student:
    """A Student from nbgrader's gradebook: each graded cell test_EXERCISE's score, and the folder nbgrader collected."""
    from nbgrader.api import MissingEntry

    name = " ".join(part for part in (student.first_name, student.last_name) if part)
    folder = next(
        (p for step in NBGRADER_FOLDERS if (p := course / step / student.id / assignment).is_dir()),
        None,
    )
    try:
        submission = gradebook.find_submission(assignment, student.id)
    except MissingEntry:
        return Student(
            student.id,
            name,
            "missing",
            reason="no submission in nbgrader's gradebook",
            folder=folder,
            lms_id=student.id,
        )
    scores = {
        g.name: (g.score, g.max_score) for notebook in submission.notebooks for g in notebook.grades
    }
    points, statuses = {}, {}
    for exercise in NAMES:
        score, most = scores.get(f"test_{exercise}", (0.0, BY_NAME[exercise].points))
        points[exercise] = float(score or 0.0)
        module = (folder / "exercises" / f"{exercise}.py") if folder else None
        untouched = (
            module is not None
            and module.is_file()
            and hashlib.sha256(module.read_bytes()).digest() == stub_digest(exercise)
        )
        statuses[exercise] = (
            "passed" if points[exercise] >= most else "not_started" if untouched else "failed"
        )
    penalty = float(submission.late_submission_penalty or 0.0)
    total = max(sum(points.values()) - penalty, 0.0)
    status = "passed" if all(s == "passed" for s in statuses.values()) else "graded"
    shown = outlet.name(os.fsencode(folder)) if folder else ""
    return Student(
        student.id,
        name,
        status,
        total,
        points,
        statuses,
        folder=folder,
        shown=shown,
        penalty=penalty,
        lms_id=student.id,
    )


def from_gradebook(path: Path, assignment: str) -> list[Student]:
    """The students of an nbgrader course's gradebook.db, for one assignment."""
    try:
        from nbgrader.api import Gradebook, MissingEntry
    except ImportError:
        raise ReportError(
            "reading nbgrader's gradebook needs nbgrader: pip install 'attention-by-hand[nbgrader]'"
        ) from None
    try:
        with Gradebook(f"sqlite:///{Path(path).resolve()}") as gradebook:
            try:
                gradebook.find_assignment(assignment)
            except MissingEntry:
                names = ", ".join(a.name for a in gradebook.assignments) or "none"
                raise ReportError(
                    f"{path} has no assignment {assignment!r} (it has: {names}): name it with --assignment"
                ) from None
            course = Path(path).resolve().parent
            return [gradebook_student(gradebook, assignment, s, course) for s in gradebook.students]
    except ReportError:
        raise
    except Exception as error:  # sqlalchemy's errors: not a gradebook, or not nbgrader's version
        raise ReportError(
            f"cannot read {path} as nbgrader's gradebook ({type(error).__name__}: {error})"
        ) from None


def read(source: Path, assignment: str = "attention-by-hand") -> tuple[list[Student], str]:
    """(the class, "gradebook" or "batch") from nbgrader's gradebook.db (known by its SQLite header) or a batch CSV."""
    try:
        with Path(source).open("rb") as f:
            head = f.read(16)
    except OSError as error:
        raise ReportError(
            f"cannot read {source} ({error.strerror}): give the CSV of `grader batch` or nbgrader's gradebook.db"
        ) from None
    if head == b"SQLite format 3\x00":
        return from_gradebook(source, assignment), "gradebook"
    return from_csv(source), "batch"
