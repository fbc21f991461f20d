"""What `grader batch` writes: one CSV row per upload, keyed by the student as the route's top level names them.

Every row is made here: from `grader check`'s JSON, for an upload the intake refused, for a check stopped. The
key is the student's name relative to the batch's folders (grader.sandbox.intake: a folder's own name, nbgrader's
STUDENT), never an absolute path, so rows made on two machines can be joined; the student's id and name, where the
route gives them (Moodle's and Canvas's names, nbgrader's ids), are columns of their own. Every cell leaves through
grader.outlet.csv_cell: controls escaped, no line a spreadsheet would run.
"""

import json
import os
import signal
from pathlib import Path

from grader import outlet
from grader.exercises import NAMES
from grader.paths import MODULES
from grader.sandbox.intake import Submission, Upload

MODULE_SHA = tuple(f"{name}.py sha256" for name in MODULES)
# for the class report: each exercise's status, every check that failed, the known mistakes named
CHECK_COLUMNS = ("exercise statuses", "failed checks", "mistakes")
# the key; the route's id and name; where the upload was
IDENTITY = ("student", "student id", "student name", "folder")
COLUMNS = (
    *IDENTITY,
    "status",
    *NAMES,
    "total",
    "isolation",
    "seconds",
    "reason",
    *MODULE_SHA,
    *CHECK_COLUMNS,
)


shown = outlet.name  # the similarity report's (grader/course/similarity.py), until it reads uploads through the intake


def modules_folder(folder: Path) -> Path:
    """The folder holding the five modules: the folder itself, or its exercises/ (the similarity report's, as above)."""
    inner = folder / "exercises"
    if not (folder / "scores.py").exists() and inner.is_dir():
        return inner
    return folder


def key(upload: Upload) -> str:
    """The student cell of an upload's row, as written: what a rerun finds the row by."""
    return outlet.csv_cell(upload.key)


def filed(path) -> str:
    """A path as the folder cell names it: its bytes through outlet.name, so the report finds the folder again."""
    return outlet.name(os.fsencode(path))


def identity(upload: Upload) -> dict:
    """The cells that say whose row it is: the key, the student's id and name, and the upload's folder on this machine."""
    folders = "; ".join(filed(source.path) for source in upload.sources)
    return {
        "student": upload.key,
        "student id": upload.student_id,
        "student name": upload.student_name,
        "folder": folders,
    }


def written(cells: dict) -> dict:
    """The row with every cell as a spreadsheet may open it (outlet.csv_cell)."""
    return {name: outlet.csv_cell(str(value)) for name, value in cells.items()}


def refused(submission: Submission) -> dict:
    """The row of an upload the intake would not take: no points, and why, in the words the student would read."""
    base = (
        identity(submission.upload)
        | {name: "" for name in NAMES}
        | {f"{name} sha256": "" for name in (f"{m}.py" for m in MODULES)}
    )
    return written(
        base
        | {"status": "unreadable", "total": "0.0", "reason": submission.problem, "seconds": "0.0"}
    )


def row(
    upload: Upload,
    returncode,
    result: Path,
    output: str,
    timed_out: bool,
    timeout: float,
    seconds: float,
) -> dict:
    """The CSV row for one finished `grader check`, every cell safe to write and to open in a spreadsheet."""
    return written(raw_row(upload, returncode, result, output, timed_out, timeout, seconds))


def raw_row(
    upload: Upload,
    returncode,
    result: Path,
    output: str,
    timed_out: bool,
    timeout: float,
    seconds: float,
) -> dict:
    """The CSV row for one finished `grader check`, as the names and messages came."""
    base = identity(upload) | {name: "" for name in NAMES} | {"total": "0.0"}
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
    if timed_out:
        return base | {
            "status": "timeout",
            "reason": f"grading took longer than {timeout:g} s and was stopped",
        }
    if returncode == 2 and not result.exists():
        return base | {"status": "unreadable", "reason": last[:300]}
    try:
        report = json.loads(result.read_text(encoding="utf-8"))
        points = {e["name"]: float(e["points"]) for e in report["exercises"]}
        total = float(report["total"]["points"])
    except (OSError, ValueError, KeyError, TypeError):
        how = (
            f"killed by {signal.Signals(-returncode).name}"
            if returncode and returncode < 0
            else f"exit status {returncode}"
        )
        return base | {
            "status": "error",
            "reason": f"the grader stopped without a result ({how}) after {seconds:.0f} s: run "
            "grader check on it alone; unconfined, a submission can stop its grader, else it is the grader's fault "
            f"to report. {last[:200]}".strip(),
        }
    return base | graded(report, points, total)


def graded(report: dict, points: dict, total: float) -> dict:
    """The cells of a row whose check finished: points, status, why each exercise did not pass, the files' hashes."""
    statuses = {e["name"]: e["status"] for e in report["exercises"]}
    not_passed = [
        f"{name} {statuses[name]}{why(report, name)}"
        for name in NAMES
        if statuses.get(name, "passed") != "passed"
    ]
    missing = [f"{name} not checked" for name in NAMES if name not in points]
    copied = [
        f"{e['name']}.py is the reference solution, byte for byte"
        for e in report["exercises"]
        if e.get("same_as_reference")
    ]
    hashes = {}
    for exercise in report["exercises"]:
        hashes.update(exercise.get("files", {}))
    cells = {name: f"{points[name]:.1f}" if name in points else "" for name in NAMES}
    faulted = any(
        check.get("fault") == "grader" for e in report["exercises"] for check in e.get("checks", [])
    )
    return cells | {
        "status": "fault" if faulted else "passed" if not missing and not not_passed else "graded",
        "total": f"{total:.1f}",
        "isolation": str(report.get("isolation", "")),
        "reason": "; ".join(copied + not_passed + missing),
        **{f"{name} sha256": hashes.get(name, "") for name in (f"{m}.py" for m in MODULES)},
        **check_cells(report),
    }


def check_cells(report: dict) -> dict:
    """Each exercise's status, the checks that failed (their ids), and the known mistakes they named, once each.

    A check stopped by an import error, a hang or a crash is no failure of its property: its exercise's status says error.
    The mistakes are the checks' own field (named where the diagnosis is made), never read out of a message.
    """
    statuses = " ".join(f"{e['name']}:{e['status']}" for e in report["exercises"])
    checks = [check for exercise in report["exercises"] for check in exercise.get("checks", [])]
    failed = [str(check["id"]) for check in checks if check.get("status") == "failed"]
    named = [
        str(check["mistake"])
        for check in checks
        if check.get("status") != "passed" and check.get("mistake")
    ]
    return {
        "exercise statuses": statuses,
        "failed checks": " ".join(failed),
        "mistakes": "; ".join(dict.fromkeys(named)),
    }


def why(report: dict, name: str) -> str:
    """The first line of the exercise's first check that did not pass, to say what went wrong."""
    for exercise in report["exercises"]:
        if exercise["name"] == name:
            for check in exercise.get("checks", []):
                if check.get("status") != "passed" and check.get("message"):
                    return ": " + str(check["message"]).splitlines()[0][:120]
    return ""
