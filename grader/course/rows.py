"""What `grader batch` grades and writes: each folder's modules and student, and its CSV row from `grader check`.

Every text cell is data: a name that is not UTF-8 is shown with its bytes escaped (Jos\\xe9), and a cell a
spreadsheet would run as a formula (OWASP's CSV-injection rule: = + - @, tab, carriage return first) gets
a leading apostrophe.
"""

import json
import re
import signal
from pathlib import Path

from grader.exercises import NAMES
from grader.paths import MODULES

MODULE_SHA = tuple(f"{name}.py sha256" for name in MODULES)
# for the class report: each exercise's status, every check that failed, the known mistakes named
CHECK_COLUMNS = ("exercise statuses", "failed checks", "mistakes")
COLUMNS = ("student", "folder", "status", *NAMES, "total", "isolation", "seconds", "reason", *MODULE_SHA, *CHECK_COLUMNS)
MISTAKE = re.compile(r"This looks like a known mistake: (.+?)\.?$", re.M)
NBGRADER_FOLDERS = ("submitted", "autograded")  # nbgrader's COURSE/submitted/STUDENT/ASSIGNMENT layout
TEXT_COLUMNS = ("student", "folder", "status", "isolation", "reason", "mistakes")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP: what makes a spreadsheet read a cell as a formula


def shown(text: str) -> str:
    """A file name as text that can be written anywhere: bytes that were not UTF-8 (kept by surrogateescape) as \\xNN."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that no file name decoded to: escaped as it is
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def inert(text: str) -> str:
    """A CSV cell no spreadsheet runs: one that starts like a formula gets a leading apostrophe."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def filed(folder) -> str:
    """A folder as its row's folder cell names it, so a rerun finds the row again (a name not UTF-8 included)."""
    return inert(shown(str(folder)))


def safe(cells: dict) -> dict:
    """The row with its text cells shown faithfully and inert."""
    return cells | {name: inert(shown(str(cells[name]))) for name in TEXT_COLUMNS if name in cells}


def modules_folder(folder: Path) -> Path:
    """The folder holding the five modules: the folder itself, or its exercises/ (nbgrader's layout)."""
    inner = folder / "exercises"
    if not (folder / "scores.py").exists() and inner.is_dir():
        return inner
    return folder


def student_of(folder: Path) -> str:
    """Who a folder belongs to: nbgrader's STUDENT in COURSE/submitted/STUDENT/ASSIGNMENT[/exercises], else its name."""
    base = folder.parent if folder.name == "exercises" else folder
    if base.parent.parent.name in NBGRADER_FOLDERS:
        return base.parent.name
    return base.name


def row(folder: Path, returncode, result: Path, output: str, timed_out: bool, timeout: float, seconds: float) -> dict:
    """The CSV row for one finished `grader check`, every text cell safe to write and to open in a spreadsheet."""
    return safe(raw_row(folder, returncode, result, output, timed_out, timeout, seconds))


def raw_row(folder: Path, returncode, result: Path, output: str, timed_out: bool, timeout: float, seconds: float) -> dict:
    """The CSV row for one finished `grader check`, as the names and messages came."""
    folder = Path(folder)
    base = {"student": student_of(folder), "folder": str(folder), **{name: "" for name in NAMES}, "total": "0.0"}
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
    if timed_out:
        return base | {"status": "timeout", "reason": f"grading took longer than {timeout:g} s and was stopped"}
    if returncode == 2 and not result.exists():
        return base | {"status": "unreadable", "reason": last[:300]}
    try:
        report = json.loads(result.read_text(encoding="utf-8"))
        points = {e["name"]: float(e["points"]) for e in report["exercises"]}
        total = float(report["total"]["points"])
    except (OSError, ValueError, KeyError, TypeError):
        how = f"killed by {signal.Signals(-returncode).name}" if returncode and returncode < 0 else f"exit status {returncode}"
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
    not_passed = [f"{name} {statuses[name]}{why(report, name)}" for name in NAMES if statuses.get(name, "passed") != "passed"]
    missing = [f"{name} not checked" for name in NAMES if name not in points]
    copied = [f"{e['name']}.py is the reference solution, byte for byte" for e in report["exercises"] if e.get("same_as_reference")]
    hashes = {}
    for exercise in report["exercises"]:
        hashes.update(exercise.get("files", {}))
    cells = {name: f"{points[name]:.1f}" if name in points else "" for name in NAMES}
    faulted = any(check.get("fault") == "grader" for e in report["exercises"] for check in e.get("checks", []))
    return cells | {
        "status": "fault" if faulted else "passed" if not missing and not not_passed else "graded",
        "total": f"{total:.1f}",
        "isolation": str(report.get("isolation", "")),
        "reason": "; ".join(copied + not_passed + missing),
        **{f"{name} sha256": hashes.get(name, "") for name in (f"{m}.py" for m in MODULES)},
        **check_cells(report),
    }


def check_cells(report: dict) -> dict:
    """Each exercise's status, the checks that failed (their ids), and the known mistakes their messages name, once each.

    A check stopped by an import error, a hang or a crash is no failure of its property: its exercise's status says error.
    """
    statuses = " ".join(f"{e['name']}:{e['status']}" for e in report["exercises"])
    checks = [check for exercise in report["exercises"] for check in exercise.get("checks", [])]
    failed = [str(check["id"]) for check in checks if check.get("status") == "failed"]
    named = [m.strip() for check in checks if check.get("status") != "passed" for m in MISTAKE.findall(str(check.get("message", "")))]
    return {"exercise statuses": statuses, "failed checks": " ".join(failed), "mistakes": "; ".join(dict.fromkeys(named))}


def why(report: dict, name: str) -> str:
    """The first line of the exercise's first check that did not pass, to say what went wrong."""
    for exercise in report["exercises"]:
        if exercise["name"] == name:
            for check in exercise.get("checks", []):
                if check.get("status") != "passed" and check.get("message"):
                    return ": " + str(check["message"]).splitlines()[0][:120]
    return ""
