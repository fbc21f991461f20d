"""A batch's rows kept as one file per submission in a folder beside the CSV, and the CSV made from them.

grades.csv's rows live in grades.results/, one JSON file per student, each written whole to a temporary file and
put in place with os.replace: a finished row costs one small file, whatever the size of the class, and a killed
run loses none. The CSV is made from them in one pass, sorted by student, when a run ends and, while it runs,
after its 1st, 2nd, 4th, 8th ... row (so it is rewritten O(log n) times, O(n) bytes in all). A rerun reads the
CSV's rows (one written by `grader merge`, or before the folder existed), then each file written since the CSV (a
killed run's CSV lags its files) or whose student the CSV lacks: a CSV changed by hand after its files keeps its rows.
"""

import csv
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

import psutil

from grader.course.rows import COLUMNS

SUFFIX = ".json"


def folder_of(csv_file: Path) -> Path:
    """The folder of a CSV's result files: grades.csv's is grades.results/ beside it."""
    return csv_file.with_name(f"{csv_file.stem}.results")


def file_of(folder: Path, student: str) -> Path:
    """A student's result file: named by the sha256 of the student cell, so no student's name becomes a path."""
    return folder / (
        hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:40] + SUFFIX
    )


class Rows:
    """The rows of the batch writing csv_file, by student: read once, each new one kept in its own file at once."""

    def __init__(self, csv_file: Path):
        self.csv_file = Path(csv_file)
        self.folder = folder_of(self.csv_file)
        self.by_student = {row["student"]: row for row in read_csv(self.csv_file)}
        written = self.csv_file.stat().st_mtime_ns if self.csv_file.exists() else 0
        for row, changed in read_folder(self.folder):
            if (
                changed >= written or row["student"] not in self.by_student
            ):  # the CSV lags its rows' files, or was edited since
                self.by_student[row["student"]] = row
        self.added = 0
        sweep(self.folder)

    def all(self) -> list[dict]:
        return list(self.by_student.values())

    def put(self, row: dict) -> None:
        """Keep a finished row in its file, in place of the student's old one; the CSV after the 1st, 2nd, 4th ... row."""
        write_atomically(file_of(self.folder, row["student"]), json.dumps(row, sort_keys=True))
        self.by_student[row["student"]] = row
        self.added += 1
        if self.added & (self.added - 1) == 0:
            self.write_csv()

    def write_csv(self) -> None:
        write_csv(self.csv_file, self.all())


def read_csv(csv_file: Path) -> list[dict]:
    """The rows of a CSV, in its order; none if it does not exist."""
    if not csv_file.exists():
        return []
    with csv_file.open(newline="", encoding="utf-8") as f:
        return [dict(r) for r in csv.DictReader(f) if r.get("student")]


def read_folder(folder: Path) -> list[tuple[dict, int]]:
    """The rows kept in a result folder, each with when its file was written (ns); a file that is not a row (none the batch
    wrote) is left out, so its student is graded again."""
    rows = []
    for path in sorted(folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []:
        try:
            row, changed = json.loads(path.read_text(encoding="utf-8")), path.stat().st_mtime_ns
        except (OSError, ValueError):
            continue
        if (
            isinstance(row, dict)
            and isinstance(row.get("student"), str)
            and all(isinstance(v, str) for v in row.values())
        ):
            rows.append((row, changed))
    return rows


def sweep(folder: Path) -> None:
    """Remove the temporary files a killed batch left in the folder (those of a process still running are its own)."""
    for path in folder.glob(".*.tmp") if folder.is_dir() else []:
        pid = path.name.rsplit(".", 2)[-2]
        if not (pid.isdigit() and psutil.pid_exists(int(pid))):
            path.unlink(missing_ok=True)


def write_atomically(path: Path, text: str) -> None:
    """Write a file whole or not at all: to a temporary file beside it, synced, then put in its place in one step."""
    path.parent.mkdir(exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def write_csv(csv_file: Path, rows: Iterable[dict], columns: Iterable[str] = COLUMNS) -> None:
    """Write the rows, sorted by student, to a temporary file beside the CSV, then put it in place in one step."""
    temporary = csv_file.with_name(f".{csv_file.name}.{os.getpid()}.tmp")
    with temporary.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(sorted(rows, key=lambda row: row["student"]))
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, csv_file)
