"""`grader batch --feedback DIR`: each student's report as they would see it, one text file per student.

The report is the one `grader check` prints, rendered from the check's JSON (never parsed from its
output), plain text, and without what is for the instructor alone (a module byte for byte the
reference). An upload that was not graded gets the reason it was not; a grading stopped by the time
limit or a fault gets what happened. Then the points, after a late penalty and the instructor's
overrides, with why. The file is named by the row's key (the upload's own name, through
grader.outlet.name, as the row has it) with every path separator and a leading dot escaped, so no
student's name can put a file anywhere but in DIR, and two students never share one.
"""

import dataclasses
import hashlib
import os
from pathlib import Path

import click

from grader import outlet
from grader.check.report import render
from grader.check.results import Report
from grader.exercises import EXERCISES
from grader.style import commands_as

MAX_POINTS = sum(exercise.points for exercise in EXERCISES)
OWN_FOLDER = " --submission exercises"  # what the report adds to a command where the working folder has no exercises/
NAME_CHARS = 180  # a file name's characters kept before a digest stands for the rest (file systems allow 255 bytes)
STOPPED = {
    "timeout": "Grading your submission took longer than the time allowed and was stopped, so it earned no points. "
    "Check that each of your functions returns quickly (grader check shows which does not), and ask your instructor.",
    "error": "The grader stopped without a result on your submission, so it is not graded yet: your instructor will look at it.",
    "fault": "A fault of the grader's stopped some checks of your submission, not something in your code: your instructor "
    "will grade it again.",
}


def file_name(key: str) -> str:
    """The feedback file of a row's key (outlet.name's text): "/" and a leading "." escaped, so it is one name in DIR."""
    name = key.replace("/", "\\x2f")
    name = "\\x2e" + name[1:] if name.startswith(".") else name
    if len(name) > NAME_CHARS:
        name = (
            name[:NAME_CHARS]
            + "-"
            + hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        )
    return name + ".txt"


def report_text(report: dict) -> str:
    """The report `grader check` prints for the check's JSON, as the student sees it: plain, nothing for the instructor."""
    read = Report.from_json(report)
    read.exercises = [dataclasses.replace(e, same_as_reference=False) for e in read.exercises]
    with commands_as("grader"):  # the student's own `grader`, whatever this machine calls it
        text = click.unstyle(render(read, Path("exercises")))
    # the student runs it in their own kit, where exercises/ is the default
    return text.replace(OWN_FOLDER, "")


def text(row: dict, report: dict | None, notes: list[str]) -> str:
    """The whole feedback: the report (or why there is none), then the points with what changed them."""
    if report is not None and row.get("status") in ("passed", "graded", "fault"):
        body = report_text(report)
        if row.get("status") == "fault":
            body += "\n\n" + STOPPED["fault"]
    else:
        body = (
            STOPPED.get(row.get("status", ""), "")
            or f"Your submission was not graded: {row.get('reason', '')}"
        )
    lines = [body.rstrip(), "", f"Points: {row.get('total', '0.0')} of {MAX_POINTS:g}."]
    lines += [f"  {note}" for note in notes]
    return "\n".join(lines) + "\n"


def write(folder: Path, key: str, row: dict, report: dict | None, notes: list[str]) -> Path:
    """Write the feedback of the upload whose key is key into folder, whole or not at all; its path."""
    path = Path(folder) / file_name(key)
    temporary = path.with_name(
        f".{os.getpid()}.{hashlib.sha256(path.name.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}.tmp"
    )
    temporary.write_text(
        outlet.terminal(text(row, report, notes)), encoding="utf-8", errors="surrogateescape"
    )
    os.replace(temporary, path)
    return path
