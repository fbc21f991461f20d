"""Every upload gets graded through `nbgrader zip_collect`, and the student's text stays data in what nbgrader shows.

One course, one LMS download (Moodle's layout) holding the shapes uploads come in: the assignment folder
zipped, the five modules flat beside the notebook, the five modules without the notebook, only a file the
kit does not grade, a notebook that is not JSON, a notebook whose graded cells were re-flagged, and a
notebook whose markdown and outputs carry HTML and JavaScript. autograde, generate_feedback and export
then run as the instructor guide says; each gradebook score must be what `grader batch` gives the files.
"""

import csv
import json
import os
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from grader.exercises import NAMES
from grader.paths import MODULES, SOLUTIONS_DIR

try:
    from nbgrader.api import Gradebook
except ImportError:
    Gradebook = None

pytestmark = [
    pytest.mark.linux("grading with nbgrader is done on Linux"),
    pytest.mark.nbgrader,
    pytest.mark.slow,
]

ASSIGNMENT = "attention-by-hand"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
LMS_PATTERN = r".*/[^/]+_(?P<student_id>\w+)_assignsubmission_file_/(?P<file_id>.+)"
SHAPES = ("folder", "flat", "nonotebook")  # the three upload shapes of the issue
STUDENTS = (*SHAPES, "essay", "broken", "reflagged", "scripter")

NAIVE_SOFTMAX = '''
import numpy as np


def softmax(x):
    """Softmax without subtracting the row's maximum: overflows for large scores."""
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)
'''

SCRIPT = "alert('from a student')"
HTML_CELL = f"""\
from IPython.display import HTML, Javascript, display
display(HTML("<script>{SCRIPT}</script><b onclick='steal()'>bold</b>"))
display(Javascript("{SCRIPT}"))
"""
MARKDOWN = f"My notes <script>{SCRIPT}</script> <img src=x onerror='steal()'> [link](javascript:steal())"


def environment(home: Path) -> dict[str, str]:
    """nbgrader's environment: this venv's scripts first; home and Jupyter's folders inside the test's folder."""
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""), HOME=str(home))
    env.pop("PYTHONPATH", None)
    env.update(JUPYTER_CONFIG_DIR=str(home / ".jupyter"), JUPYTER_DATA_DIR=str(home / "data"), IPYTHONDIR=str(home / ".ipython"))
    return env


def run(cwd: Path, env: dict | None, *args: str) -> str:
    """Run a command of the course (nbgrader or grader), failing the test if it fails; its output."""
    done = subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def modules() -> dict[str, str]:
    """What each student wrote: the first two exercises right, a softmax that overflows, the rest stubs."""
    return {name: (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8") for name in ("scores", "masking")} | {"softmax": NAIVE_SOFTMAX}


def student_folder(release: Path, folder: Path, student: str) -> None:
    """The student's copy of the assignment, changed as the student did."""
    import shutil

    shutil.copytree(release, folder)
    for name, source in modules().items():
        (folder / "exercises" / f"{name}.py").write_text(source, encoding="utf-8")
    path = folder / NOTEBOOK
    nb = json.loads(path.read_text(encoding="utf-8"))
    if student == "broken":
        path.write_text(path.read_text(encoding="utf-8")[:-200], encoding="utf-8")  # cut short: not JSON
        return
    if student == "reflagged":
        for cell in nb["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade"):
                cell["metadata"]["nbgrader"]["grade"] = False
                cell["metadata"]["nbgrader"]["grade_id"] += "_mine"
    if student == "scripter":
        nb["cells"].insert(0, {"cell_type": "markdown", "id": "notes", "metadata": {}, "source": MARKDOWN})
        nb["cells"].insert(
            1, {"cell_type": "code", "id": "show", "execution_count": None, "metadata": {}, "outputs": [], "source": HTML_CELL}
        )
    path.write_text(json.dumps(nb), encoding="utf-8")


def upload(download: zipfile.ZipFile, staging: Path, student: str, folder: Path) -> None:
    """The student's upload, as the LMS download holds it."""
    prefix = f"Student {student}_{student}_assignsubmission_file_/"
    if student == "folder":  # the whole folder as one zip
        inner = staging / f"{student}.zip"
        with zipfile.ZipFile(inner, "w") as archive:
            for file in sorted(folder.rglob("*")):
                archive.write(file, file.relative_to(folder.parent))
        download.write(inner, prefix + inner.name)
    elif student in ("flat", "nonotebook"):  # the five modules as loose files (and the notebook, for flat)
        for name in MODULES:
            download.write(folder / "exercises" / f"{name}.py", prefix + f"{name}.py")
        if student == "flat":
            download.write(folder / NOTEBOOK, prefix + NOTEBOOK)
    elif student == "essay":
        download.writestr(prefix + "essay.docx", b"not a notebook")
    else:  # the folder's files one by one
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                download.write(file, prefix + str(file.relative_to(folder)))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course whose students all came through zip_collect, autograded, with feedback and the export."""
    if Gradebook is None:
        pytest.fail("nbgrader is not installed: pip install -e '.[test,nbgrader]'")
    root = tmp_path_factory.mktemp("uploads")
    course, env = root / "course", environment(root / "instructor")
    course.mkdir()
    run(course, None, "grader", "nbgrader", ".")
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("\nc.RunNotebook.timeout = 10\n")
    run(course, env, "nbgrader", "generate_assignment", ASSIGNMENT)
    run(course, env, "nbgrader", "release_assignment", ASSIGNMENT)
    archive = course / "downloaded" / ASSIGNMENT / "archive" / "moodle.zip"
    archive.parent.mkdir(parents=True)
    folders = {}
    with zipfile.ZipFile(archive, "w") as download:
        for student in STUDENTS:
            folders[student] = root / "students" / student / ASSIGNMENT
            student_folder(course / "release" / ASSIGNMENT, folders[student], student)
            upload(download, root / "students" / student, student, folders[student])
    collected = run(course, env, "nbgrader", "zip_collect", ASSIGNMENT, f"--FileNameCollectorPlugin.named_regexp={LMS_PATTERN}")
    log = run(course, env, "nbgrader", "autograde", ASSIGNMENT)
    run(course, env, "nbgrader", "generate_feedback", ASSIGNMENT)
    run(course, env, "nbgrader", "export")
    batch_csv = root / "batch.csv"
    run(root, None, "grader", "batch", *(str(folders[s] / "exercises") for s in SHAPES), "--csv", str(batch_csv))
    with batch_csv.open(encoding="utf-8") as f:
        batch = {Path(r["folder"]).parent.parent.name: r for r in csv.DictReader(f)}
    with (course / "grades.csv").open(encoding="utf-8") as f:
        export = {r["student_id"]: r for r in csv.DictReader(f)}
    return {"root": course, "batch": batch, "export": export, "log": log, "collected": collected}


def gradebook_scores(course, student: str) -> dict[str, float]:
    """The points nbgrader recorded for each graded cell of the student's notebook."""
    with Gradebook(f"sqlite:///{course['root'] / 'gradebook.db'}") as gb:
        submission = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        return {grade.name.removeprefix("test_"): grade.score for grade in submission.grades}


def autograded_text(course, student: str) -> str:
    """The student's autograded notebook, as text."""
    return (course["root"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8")


def feedback(course, student: str) -> str:
    """The student's feedback page."""
    return (course["root"] / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("student", SHAPES)
def test_each_upload_shape_gets_the_score_grader_batch_gives(course, student):
    batch = course["batch"][student]
    assert batch["status"] == "graded" and float(batch["scores"]) > 0, batch
    assert gradebook_scores(course, student) == {name: float(batch[name]) for name in NAMES}
    assert float(course["export"][student]["score"]) == float(batch["total"])


def test_a_student_whose_upload_cannot_be_graded_gets_a_row_saying_why(course):
    assert "essay" in course["export"] and float(course["export"]["essay"]["score"]) == 0.0
    said = feedback(course, "essay")
    assert "Your upload had no notebook" in said and "essay.docx" in said and "none of the five modules" in said


def test_an_upload_without_the_notebook_is_told_so(course):
    said = feedback(course, "nonotebook")
    assert "Your upload had no notebook" in said and "scores.py" in said


@pytest.mark.parametrize("student, why", [("broken", "could not be read as a notebook"), ("reflagged", "test_scores_mine")])
def test_a_notebook_nbgrader_cannot_grade_is_replaced_and_the_modules_graded(course, student, why):
    expected = {name: float(course["batch"]["flat"][name]) for name in NAMES}  # the same modules as flat's
    assert gradebook_scores(course, student) == expected
    said = feedback(course, student)
    assert "was not graded as submitted" in said and why in said


def test_the_students_html_and_javascript_are_not_live_in_the_autograded_notebook_or_the_feedback(course):
    cells = json.loads(autograded_text(course, "scripter"))["cells"]
    notes = "".join(next(cell for cell in cells if cell.get("id") == "notes")["source"])
    assert "<script" not in notes and "<img" not in notes and "&lt;script&gt;" in notes  # the student's text kept, as text
    shown = [output.get("data", {}) for cell in cells if cell["cell_type"] == "code" for output in cell["outputs"]]
    assert {"text/html", "text/plain"} in [set(data) for data in shown]  # the HTML output kept, cleaned
    assert not [data for data in shown if "application/javascript" in data]
    html = "".join("".join(data.get("text/html", "")) for data in shown)
    assert "<b>bold</b>" in html and "<script" not in html and "onclick" not in html
    live = Live()
    live.feed(feedback(course, "scripter"))
    assert live.found == []  # the student's text is on the page only as text
    assert gradebook_scores(course, "scripter") == {name: float(course["batch"]["flat"][name]) for name in NAMES}


class Live(HTMLParser):
    """What of a page a browser would run: handlers, javascript: links, and scripts holding the student's code."""

    def __init__(self):
        super().__init__()
        self.found, self.in_script = [], False

    def handle_starttag(self, tag, attrs):
        self.found += [f"<{tag} {name}>" for name, value in attrs if name.startswith("on") or "javascript:" in (value or "")]
        self.in_script = tag == "script"

    def handle_endtag(self, tag):
        self.in_script = False

    def handle_data(self, data):
        if self.in_script and ("from a student" in data or "steal" in data):
            self.found.append(f"<script>{data[:60]}")


def test_a_module_that_is_the_reference_is_said_to_the_instructor_only(course):
    assert "For the instructor" not in feedback(course, "flat") and "byte for byte" not in feedback(course, "flat")
    cells = json.loads(autograded_text(course, "flat"))["cells"]
    said = {
        c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["attention_by_hand"] for c in cells if "attention_by_hand" in c["metadata"]
    }
    assert said["test_scores"] == {"same_as_reference": True} and said["test_softmax"] == {"same_as_reference": False}
    assert "For the instructor: flat's masking.py, scores.py are byte for byte the kit's reference solution" in course["log"]
