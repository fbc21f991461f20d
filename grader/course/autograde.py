"""Trusted grading at `nbgrader autograde`: the kit's preprocessors, which nbgrader_config.py registers.

GradeModules grades the five modules of each submission as collected, with the hidden checks and the
student's code confined, before any cell of the notebook runs, and keeps the result in nbgrader's
process. RunNotebook runs the notebook in a confined kernel for the feedback (never the graded
cells), and a cell that hangs or kills the kernel ends that run, not the grading. WriteGrades then
sets each graded cell's output to the report and the points, which SaveAutoGrades records.
"""

import contextlib
import glob
import io
import os
import re
import stat
import sys
import tempfile
from pathlib import Path

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Bool

from grader.check.report import render
from grader.check.results import Report
from grader.check.runner import run_checks
from grader.exercises import BY_NAME, NAMES
from grader.paths import MODULES
from grader.sandbox import linux
from grader.sandbox.isolation import APART

KEY = "attention_by_hand"  # where the grading waits in nbconvert's resources, for WriteGrades
MAX_BYTES = 1 << 20  # a module larger than this is not graded
LITTER = {".hypothesis", "__pycache__"}  # never left in an autograded folder, so never in the feedback


class Unreadable(Exception):
    """The submission's modules cannot be graded; the message says why, to the student."""


def read_modules(submission: Path) -> dict[str, bytes]:
    """The bytes of exercises/NAME.py for the five modules: regular files in a folder exercises/, none of them a link."""
    folder = submission / "exercises"
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        raise Unreadable("there is no folder exercises/ in the submission (a link is not one)") from None
    try:
        return {name: _read_at(fd, f"{name}.py") for name in MODULES}
    finally:
        os.close(fd)


def _read_at(folder_fd: int, name: str) -> bytes:
    """One regular file of an open folder, at most MAX_BYTES."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
    except OSError:
        raise Unreadable(f"exercises/{name} is missing, or is a link, which is not graded") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise Unreadable(f"exercises/{name} is not a regular file")
        data = file.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise Unreadable(f"exercises/{name} is larger than {MAX_BYTES >> 20} MB")
    return data


def collected(exporter, assignment: str) -> dict:
    """Every submission's modules as they were before the first notebook ran: student -> bytes, or Unreadable."""
    kept = getattr(exporter, "_attention_by_hand_collected", None)
    if kept is None:
        coursedir = course_directory(exporter)
        pattern = coursedir.format_path(coursedir.submitted_directory, "*", assignment)
        named = coursedir.format_path(re.escape(coursedir.submitted_directory), "(?P<student>.*)", re.escape(assignment), escape=True)
        kept = {}
        for path in sorted(glob.glob(pattern)):
            student = re.fullmatch(named, path).group("student")
            try:
                kept[student] = read_modules(Path(path))
            except Unreadable as problem:
                kept[student] = problem
        exporter._attention_by_hand_collected = kept
    return kept


def course_directory(configurable):
    """nbgrader's CourseDirectory of the converter a preprocessor belongs to."""
    while configurable is not None and not hasattr(configurable, "coursedir"):
        configurable = configurable.parent
    if configurable is None:
        raise RuntimeError("the kit's autograde steps run inside `nbgrader autograde` only")
    return configurable.coursedir


class GradeModules(NbGraderPreprocessor):
    """Grade the submission's exercises/ as collected, before any cell runs, in nbgrader's own process."""

    allow_unisolated = Bool(False, help="Grade even where the students' code cannot be confined (for a trial run, never for grades).").tag(
        config=True
    )

    def preprocess(self, nb: NotebookNode, resources: dict):
        linux.protect_grader()  # before any kernel starts: no process of the same user reads or writes our memory
        info = resources["nbgrader"]
        files = collected(self.parent, info["assignment"]).get(info["student"], Unreadable("nothing was collected"))
        resources[KEY] = grade(files)
        isolation = resources[KEY]["isolation"]
        if isolation not in (*APART, "-") and not self.allow_unisolated:
            raise RuntimeError(
                f"the students' code ran with isolation {isolation!r}, which cannot keep one student's code from reading "
                "another's files, so its grades could be forged: install bubblewrap "
                "(apt-get install bubblewrap), or grade as root; c.GradeModules.allow_unisolated = True allows a trial run"
            )
        self.log.info("Graded %s's exercises/ as collected: %s (isolation: %s)", info["student"], resources[KEY]["points"], isolation)
        return nb, resources


def grade(files) -> dict:
    """Each exercise's (points, report text) for these modules; every exercise 0 when they cannot be read."""
    if isinstance(files, Unreadable):
        text = (
            f"Not graded: {files}. Submit your five modules in the folder exercises/ beside the notebook "
            "(check them first with `grader check`)."
        )
        return {"isolation": "-", "points": {n: 0.0 for n in NAMES}, "texts": dict.fromkeys(NAMES, text)}
    from hypothesis.configuration import set_hypothesis_home_dir

    with tempfile.TemporaryDirectory(prefix="abh-grade-") as tmp:
        folder = Path(tmp) / "exercises"
        folder.mkdir()
        for name, data in files.items():
            (folder / f"{name}.py").write_bytes(data)
        set_hypothesis_home_dir(Path(tmp) / ".hypothesis")  # nothing written beside nbgrader's course
        try:
            report = run_checks(folder)
        finally:
            set_hypothesis_home_dir(None)
        texts = {result.name: cell_text(report, result, Path(tmp)) for result in report.exercises}
    return {"isolation": report.isolation, "points": {r.name: r.points for r in report.exercises}, "texts": texts}


class _Text(io.StringIO):
    """What the report is printed to: not a terminal (no colour), UTF-8 (the real marks)."""

    encoding = "utf-8"


def cell_text(report: Report, result, where: Path) -> str:
    """One exercise's report as the student reads it in the graded cell, with the commands as `grader check`."""
    single = Report([result], seed=report.seed, isolation=report.isolation, checks=report.checks)
    hashes = ", ".join(f"{name} {digest[:12]}" for name, digest in sorted(result.files.items()))
    argv0 = sys.argv[0]
    sys.argv[0] = "grader"  # the report names commands as the program that runs it: here, the student's `grader`
    try:
        with contextlib.chdir(where), contextlib.redirect_stdout(_Text()):
            text = render(single, Path("exercises"))
    finally:
        sys.argv[0] = argv0
    return f"Graded from exercises/ as submitted, before any cell of this notebook ran (sha256: {hashes}).\n\n{text}\n"


class WriteGrades(NbGraderPreprocessor):
    """Set each graded cell's output to the kit's report and points, whatever the notebook's cells did."""

    def preprocess(self, nb: NotebookNode, resources: dict):
        grading = resources.get(KEY)
        if grading is None:
            raise RuntimeError("GradeModules must come before WriteGrades in c.Autograde.autograde_preprocessors")
        for cell in nb.cells:
            exercise = graded_exercise(cell)
            if exercise is not None:
                points = min(max(grading["points"][exercise], 0.0), float(cell.metadata.nbgrader["points"]))
                cell.outputs = outputs(grading["texts"][exercise], points)
        return nb, resources


def graded_exercise(cell) -> str | None:
    """The exercise a graded code cell of the kit's notebook grades (grade_id test_NAME), else None."""
    if cell.cell_type != "code" or not is_grade(cell):
        return None
    name = cell.metadata.nbgrader.get("grade_id", "").removeprefix("test_")
    return name if name in BY_NAME else None


def outputs(text: str, points: float) -> list:
    """The report on stdout, then the points as a plain float, which nbgrader reads as partial credit."""
    return [
        NotebookNode(output_type="stream", name="stdout", text=text),
        NotebookNode(output_type="execute_result", execution_count=None, metadata={}, data={"text/plain": repr(float(points))}),
    ]
