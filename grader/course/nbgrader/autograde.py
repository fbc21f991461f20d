"""Trusted grading at `nbgrader autograde`: the kit's preprocessors, which nbgrader_config.py registers.

GradeModules grades the five modules of each submission as collected, with the hidden checks and the
student's code confined, before any cell of the notebook runs, and keeps the result in nbgrader's
process. RunNotebook runs the notebook in a confined kernel for the feedback (never the graded
cells), and a cell that hangs or kills the kernel ends that run, not the grading. WriteGrades then
sets each graded cell's output to the report and the points, which SaveAutoGrades records.
"""

import contextlib
import dataclasses
import glob
import io
import os
import re
import tempfile
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbconvert.preprocessors import Preprocessor
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Bool

from grader import outlet
from grader.check.report import render
from grader.check.results import ALL_OR_NOTHING, SCORING_VAR, Report
from grader.check.runner import run_checks
from grader.course.errors import Unreadable
from grader.course.nbgrader import notebook as kit_notebook
from grader.course.nbgrader import watching
from grader.exercises import BY_NAME, NAMES
from grader.sandbox import intake, linux
from grader.sandbox.isolation import APART
from grader.style import commands_as

KEY = "attention_by_hand"  # where the grading waits in nbconvert's resources, for WriteGrades
# never left in an autograded folder, so never in the feedback
LITTER = {".hypothesis", "__pycache__"}


def read_modules(submission: Path) -> dict[str, bytes]:
    """The bytes of exercises/NAME.py for the five modules, as the intake reads nbgrader's layout: regular files, no link."""
    try:
        return intake.nbgrader_modules(submission)
    except intake.Refused as refused:
        raise Unreadable(str(refused)) from None


def collected(exporter, assignment: str) -> dict:
    """Every submission's modules as they were before the first notebook ran: student -> bytes, or Unreadable."""
    kept = getattr(exporter, "_attention_by_hand_collected", None)
    if kept is None:
        coursedir = course_directory(exporter)
        pattern = coursedir.format_path(coursedir.submitted_directory, "*", assignment)
        named = coursedir.format_path(
            re.escape(coursedir.submitted_directory),
            "(?P<student>.*)",
            re.escape(assignment),
            escape=True,
        )
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

    allow_unisolated = Bool(
        False,
        help="Grade even where the students' code cannot be confined (for a trial run, never for grades).",
    ).tag(config=True)

    all_or_nothing = Bool(
        False,
        help="An exercise earns its points only when every check passes (else points times the share passed).",
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        linux.protect_grader()  # before any kernel starts: no process of the same user reads or writes our memory
        info = resources["nbgrader"]
        files = collected(self.parent, info["assignment"]).get(
            info["student"], Unreadable("nothing was collected")
        )
        with scoring(self.all_or_nothing):
            resources[KEY] = grade(files)
        isolation = resources[KEY]["isolation"]
        if isolation not in (*APART, "-") and not self.allow_unisolated:
            raise RuntimeError(
                f"the students' code ran with isolation {isolation!r}, which cannot keep one student's code from reading "
                "another's files, so its grades could be forged: install bubblewrap "
                "(apt-get install bubblewrap), or grade as root, or, in a pod that allows neither, on a kernel with Landlock "
                "and with libseccomp (pip install pyseccomp); c.GradeModules.allow_unisolated = True allows a trial run"
            )
        self.log.info(
            "Graded %s's exercises/ as collected: %s (isolation: %s)",
            info["student"],
            resources[KEY]["points"],
            isolation,
        )
        if resources[KEY]["copied"]:
            copied = ", ".join(f"{name}.py" for name in resources[KEY]["copied"])
            verb = "is" if len(resources[KEY]["copied"]) == 1 else "are"
            self.log.warning(
                "For the instructor: %s's %s %s byte for byte the kit's reference solution",
                info["student"],
                copied,
                verb,
            )
        watching.graded(self, info["student"], resources[KEY])
        return nb, resources


@contextlib.contextmanager
def scoring(all_or_nothing: bool):
    """Score the exercises all or nothing, or by the share of checks passed (the default), while grading."""
    before = os.environ.get(SCORING_VAR)
    if all_or_nothing:
        os.environ[SCORING_VAR] = ALL_OR_NOTHING
    else:
        os.environ.pop(SCORING_VAR, None)
    try:
        yield
    finally:
        os.environ.pop(SCORING_VAR, None)
        if before is not None:
            os.environ[SCORING_VAR] = before


def grade(files) -> dict:
    """Each exercise's (points, report text) for these modules; every exercise 0 when they cannot be read."""
    if isinstance(files, Unreadable):
        text = (
            f"Not graded: {files}. Submit your five modules in the folder exercises/ beside the notebook "
            "(check them first with `grader check`)."
        )
        return {
            "isolation": "-",
            "points": {n: 0.0 for n in NAMES},
            "texts": dict.fromkeys(NAMES, text),
            "copied": [],
            "faulted": [],
        }
    from hypothesis.configuration import set_hypothesis_home_dir

    with tempfile.TemporaryDirectory(prefix="abh-grade-") as tmp:
        folder = Path(tmp) / "exercises"
        folder.mkdir()
        for name, data in files.items():
            (folder / f"{name}.py").write_bytes(data)
        # nothing written beside nbgrader's course
        set_hypothesis_home_dir(Path(tmp) / ".hypothesis")
        try:
            report = run_checks(folder)
        finally:
            set_hypothesis_home_dir(None)
        texts = {result.name: cell_text(report, result, Path(tmp)) for result in report.exercises}
    copied = sorted(r.name for r in report.exercises if r.same_as_reference)
    faulted = sorted(r.name for r in report.exercises if any(check.by_grader for check in r.checks))
    points = {r.name: r.points for r in report.exercises}
    return {
        "isolation": report.isolation,
        "points": points,
        "texts": texts,
        "copied": copied,
        "faulted": faulted,
    }


class _Text(io.StringIO):
    """What the report is printed to: not a terminal (no colour), UTF-8 (the real marks)."""

    encoding = "utf-8"


def cell_text(report: Report, result, where: Path) -> str:
    """One exercise's report as the student reads it in the graded cell, with the commands as `grader check`."""
    # the report for the student: "byte for byte the reference" is the instructor's to read (nbgrader's log, the cell's metadata)
    student_view = dataclasses.replace(result, same_as_reference=False)
    single = Report(
        [student_view], seed=report.seed, isolation=report.isolation, checks=report.checks
    )
    hashes = ", ".join(f"{name} {digest[:12]}" for name, digest in sorted(result.files.items()))
    with (
        contextlib.chdir(where),
        contextlib.redirect_stdout(_Text()),
        commands_as("grader"),
    ):  # the student's `grader`
        text = render(single, Path("exercises"))
    return f"Graded from exercises/ as submitted, before any cell of this notebook ran (sha256: {hashes}).\n\n{text}\n"


class WriteGrades(NbGraderPreprocessor):
    """Set each graded cell's output to the kit's report and points, whatever the notebook's cells did."""

    def preprocess(self, nb: NotebookNode, resources: dict):
        grading = resources.get(KEY)
        if grading is None:
            raise RuntimeError(
                "GradeModules must come before WriteGrades in c.Autograde.autograde_preprocessors"
            )
        for cell in nb.cells:
            exercise = graded_exercise(cell)
            if exercise is not None:
                points = min(
                    max(grading["points"][exercise], 0.0), float(cell.metadata.nbgrader["points"])
                )
                cell.outputs = outputs(grading["texts"][exercise], points)
                # for the instructor, in the autograded notebook (the feedback page does not show metadata)
                cell.metadata[KEY] = {"same_as_reference": exercise in grading.get("copied", [])}
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
        NotebookNode(
            output_type="execute_result",
            execution_count=None,
            metadata={},
            data={"text/plain": repr(float(points))},
        ),
    ]


# shown as text, or as an image's data
SAFE_OUTPUTS = {"text/plain", "text/latex", "image/png", "image/jpeg", "application/json"}


class SanitizeStudentHTML(Preprocessor):
    """The student's markdown and HTML cleaned once (grader.outlet.markup), and stored where nothing renders it anew.

    A markdown cell's source becomes its HTML, cleaned, on one line inside a <div>: markdown passes a one-line HTML
    block through as it is, so the feedback page and the formgrader show exactly what was cleaned. (Cleaned HTML stored
    as markdown of several lines is parsed afresh after a blank line: links and images come back live.) A raw cell is
    cleaned the same way. An output keeps plain text, LaTeX, PNG and JPEG data, and HTML (from markdown too) cleaned;
    its metadata, which the page writes into the image's tag, is dropped.
    """

    # nbconvert's preprocessors are off unless enabled, and nbgrader does not enable them
    enabled = Bool(True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "markdown":
            cell.source = one_block(outlet.markup(markdown2html_mistune(cell.source)))
            cell.pop("attachments", None)  # an image it named is not shown: no <img> is kept
        elif cell.cell_type == "raw":
            cell.source = outlet.markup(cell.source)
        elif cell.cell_type == "code":
            for output in cell.get("outputs", []):
                clean_output(output)
        return cell, resources


def one_block(html: str) -> str:
    """HTML as one line inside a <div>, which markdown passes through as it is: its line breaks written as &#10;."""
    return "<div>" + html.replace("\n", "&#10;") + "</div>"


def clean_output(output) -> None:
    """Keep of an output only what shows as text or an image, and its HTML cleaned; drop its metadata."""
    if "data" in output:
        data = output["data"]
        html = data.get("text/html") or (
            markdown2html_mistune(_text(data["text/markdown"])) if "text/markdown" in data else None
        )
        output["data"] = {kind: value for kind, value in data.items() if kind in SAFE_OUTPUTS}
        if html is not None:
            output["data"]["text/html"] = outlet.markup(_text(html))
    if "metadata" in output:
        output["metadata"] = {}


def _text(value) -> str:
    """A notebook's text: a string, or a list of lines."""
    return "".join(value) if isinstance(value, list) else str(value)


class KitNotebookExporter(NotebookExporter):
    """nbgrader's reader of submitted notebooks, which puts the kit's notebook in place of one it cannot grade."""

    def from_file(self, file_stream, resources=None, **kw):
        # from the first notebook read: nbgrader's checks of the cells come before GradeModules
        watching.watch(self)
        try:
            # its bytes and cells bounded before it is read
            nb = nbformat.reads(intake.notebook(file_stream), as_version=4)
            # as nbconvert does after each step, which would stop the grading
            nbformat.validate(nb, relax_add_props=True)
            why = changed_graded_cells(nb)
        except intake.Refused as refused:
            nb, why = None, f"it was not read: {refused}"
        except (
            Exception
        ) as error:  # not UTF-8, not JSON, not a notebook: whatever the student's file was
            nb, why = (
                None,
                f"it could not be read as a notebook ({type(error).__name__}: {str(error)[:200]})",
            )
        if why:
            nb = replacement(resources or {}, why)
            self.log.warning("Graded the kit's notebook in place of the submitted one: %s", why)
        return self.from_notebook_node(nb, resources=resources, **kw)


def kit_graded_cells() -> dict[str, dict]:
    """grade_id -> the nbgrader metadata of each graded cell the kit's notebook has."""
    cells = kit_notebook.build("kit")["cells"]
    return {
        c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]
        for c in cells
        if "nbgrader" in c["metadata"]
    }


def changed_graded_cells(nb) -> str:
    """What was changed about the notebook's graded cells (each exactly once, a code cell, flagged as released), or ""."""
    kit = kit_graded_cells()
    seen: list[str] = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader")
        if not meta:
            continue
        grade_id = meta.get("grade_id")
        if grade_id not in kit:
            return f"a cell carries nbgrader's flags as {str(grade_id)[:40]!r}, which the kit's notebook has not"
        flags = {key: meta.get(key) for key in ("grade", "solution", "locked", "points")}
        if cell.get("cell_type") != "code" or flags != {key: kit[grade_id][key] for key in flags}:
            return f"the graded cell {grade_id} was changed (its type or its nbgrader flags)"
        seen.append(grade_id)
    missing = [grade_id for grade_id in kit if seen.count(grade_id) != 1]
    return f"the graded cells {', '.join(missing)} are missing or repeated" if missing else ""


def replacement(resources: dict, why: str):
    """The kit's notebook for this assignment, with a note on top saying why it stands in for the student's."""
    info = resources.get("nbgrader", {})
    nb = nbformat.from_dict(kit_notebook.build(info.get("assignment", "attention-by-hand")))
    note = (
        f"**Your notebook {info.get('notebook', '')}.ipynb was not graded as submitted**: {why}. "
        "The kit's notebook was graded in its place. Your five modules in exercises/ were graded as you "
        "submitted them, so your points do not depend on this; next time submit the notebook as you were given it."
    )
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(note))
    return nb
