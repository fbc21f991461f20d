"""Every upload gets graded through `nbgrader zip_collect`, and the student's text stays data in what nbgrader shows.

One course, one LMS download (Moodle's layout) holding the shapes uploads come in: the assignment folder
zipped, the five modules flat beside the notebook, the five modules without the notebook, only a file the
kit does not grade, a notebook that is not JSON, a notebook whose graded cells were re-flagged, and a
notebook whose markdown and outputs carry HTML and JavaScript; and three attacks: a zip holding a folder
named like a classmate's, a zip of zips that unpacks past the bounds, and only a link. zip_collect (with
the README's pattern), autograde, generate_feedback and export then run as the instructor guide says; each
gradebook score must be what `grader batch` gives the files.
"""

import csv
import io
import json
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from course_env import environment, run

from grader.exercises import NAMES
from grader.paths import KIT_ROOT, MODULES, SOLUTIONS_DIR

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
LMS_PATTERN = (
    r".*?/[^/]+_(?P<student_id>\w+)_assignsubmission_file_/(?P<file_id>.+)"  # the README's
)
CANVAS_PATTERN = r".*?/[^/_]+_(?i:late_)?(?P<student_id>\d+)_\d+_(?P<file_id>.+)"  # the instructor guide's, for Canvas
SHAPES = ("folder", "flat", "nonotebook")  # the three upload shapes of the issue
# files a classmate's softmax (sorting before it); unpacks past the bounds; only a link
ATTACKS = ("aaron", "bomb", "linker")
STUDENTS = (*SHAPES, "essay", "broken", "reflagged", "scripter", *ATTACKS)

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
MARKDOWN = (
    f"My notes <script>{SCRIPT}</script> <img src=x onerror='steal()'> [link](javascript:steal())\n\n"
    "- a list\n\n  [live](javascript:steal()) ![far](https://elsewhere.example/pixel.png)"  # a blank line in a list item
)


def modules() -> dict[str, str]:
    """What each student wrote: the first two exercises right, a softmax that overflows, the rest stubs."""
    return {
        name: (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8")
        for name in ("scores", "masking")
    } | {"softmax": NAIVE_SOFTMAX}


def student_folder(release: Path, folder: Path, student: str) -> None:
    """The student's copy of the assignment, changed as the student did."""
    import shutil

    shutil.copytree(release, folder)
    for name, source in modules().items():
        (folder / "exercises" / f"{name}.py").write_text(source, encoding="utf-8")
    path = folder / NOTEBOOK
    nb = json.loads(path.read_text(encoding="utf-8"))
    if student == "broken":
        # cut short: not JSON
        path.write_text(path.read_text(encoding="utf-8")[:-200], encoding="utf-8")
        return
    if student == "reflagged":
        for cell in nb["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade"):
                cell["metadata"]["nbgrader"]["grade"] = False
                cell["metadata"]["nbgrader"]["grade_id"] += "_mine"
    if student == "scripter":
        nb["cells"].insert(
            0, {"cell_type": "markdown", "id": "notes", "metadata": {}, "source": MARKDOWN}
        )
        nb["cells"].insert(
            1,
            {
                "cell_type": "code",
                "id": "show",
                "execution_count": None,
                "metadata": {},
                "outputs": [],
                "source": HTML_CELL,
            },
        )
    path.write_text(json.dumps(nb), encoding="utf-8")


def attack(download: zipfile.ZipFile, prefix: str, student: str) -> None:
    """An attacker's upload: a classmate's folder inside a zip, a zip of zips past the bounds, or only a link."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as archive:
        if (
            student == "aaron"
        ):  # named like flat's folder in the LMS download, a softmax that is wrong
            archive.writestr(
                "Student flat_flat_assignsubmission_file_/exercises/softmax.py",
                "def softmax(x):\n    return x\n",
            )
        else:  # 40 MiB of zeros, 40 KiB packed, in a zip inside the upload's zip
            deep = io.BytesIO()
            with zipfile.ZipFile(deep, "w", zipfile.ZIP_DEFLATED) as bomb:
                bomb.writestr("zeros.py", bytes(40 << 20))
            archive.writestr("deep.zip", deep.getvalue())
    if student == "linker":  # a link to the classmate's folder, as zip keeps links
        link = zipfile.ZipInfo(prefix + "exercises")
        link.external_attr = 0o120777 << 16
        download.writestr(link, "../Student flat_flat_assignsubmission_file_/exercises")
        return
    download.writestr(prefix + "work.zip", inner.getvalue())


def upload(download: zipfile.ZipFile, staging: Path, student: str, folder: Path) -> None:
    """The student's upload, as the LMS download holds it."""
    prefix = f"Student {student}_{student}_assignsubmission_file_/"
    if student in ATTACKS:
        attack(download, prefix, student)
    elif student == "folder":  # the whole folder as one zip
        inner = staging / f"{student}.zip"
        with zipfile.ZipFile(inner, "w") as archive:
            for file in sorted(folder.rglob("*")):
                archive.write(file, file.relative_to(folder.parent))
        download.write(inner, prefix + inner.name)
    elif student in (
        "flat",
        "nonotebook",
    ):  # the five modules as loose files (and the notebook, for flat)
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
    collected = run(
        course,
        env,
        "nbgrader",
        "zip_collect",
        ASSIGNMENT,
        f"--FileNameCollectorPlugin.named_regexp={LMS_PATTERN}",
    )
    log = run(course, env, "nbgrader", "autograde", ASSIGNMENT)
    run(course, env, "nbgrader", "generate_feedback", ASSIGNMENT)
    run(course, env, "nbgrader", "export")
    batch_csv = root / "batch.csv"
    run(
        root,
        None,
        "grader",
        "batch",
        *(str(folders[s] / "exercises") for s in SHAPES),
        "--csv",
        str(batch_csv),
    )
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
    return (course["root"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).read_text(
        encoding="utf-8"
    )


def feedback(course, student: str) -> str:
    """The student's feedback page."""
    return (course["root"] / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize("student", SHAPES)
def test_each_upload_shape_gets_the_score_grader_batch_gives(course, student):
    batch = course["batch"][student]
    assert batch["status"] == "graded" and float(batch["scores"]) > 0, batch
    assert gradebook_scores(course, student) == {name: float(batch[name]) for name in NAMES}
    assert float(course["export"][student]["score"]) == float(batch["total"])


def test_a_student_whose_upload_cannot_be_graded_gets_a_row_saying_why(course):
    assert "essay" in course["export"] and float(course["export"]["essay"]["score"]) == 0.0
    said = feedback(course, "essay")
    assert (
        "Your upload had no notebook" in said
        and "essay.docx" in said
        and "none of the five modules" in said
    )


def test_an_upload_without_the_notebook_is_told_so(course):
    said = feedback(course, "nonotebook")
    assert "Your upload had no notebook" in said and "scores.py" in said


@pytest.mark.parametrize(
    "student, why",
    [("broken", "could not be read as a notebook"), ("reflagged", "test_scores_mine")],
)
def test_a_notebook_nbgrader_cannot_grade_is_replaced_and_the_modules_graded(course, student, why):
    # the same modules as flat's
    expected = {name: float(course["batch"]["flat"][name]) for name in NAMES}
    assert gradebook_scores(course, student) == expected
    said = feedback(course, student)
    assert "was not graded as submitted" in said and why in said


def formgrader_view(course, student: str) -> str:
    """The autograded notebook as the formgrader renders it for the instructor."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers

    exporter = HTMLExporter(
        template_name="formgrade", extra_template_basedirs=[handlers.template_path]
    )
    resources = {
        "assignment_id": ASSIGNMENT,
        "notebook_id": ASSIGNMENT,
        "submission_id": "x",
        "index": 0,
        "total": 1,
    }
    resources |= {
        "base_url": "/",
        "student": student,
        "last_name": "",
        "first_name": "",
        "notebook_path": "x",
    }
    html, _ = exporter.from_filename(
        str(course["root"] / "autograded" / student / ASSIGNMENT / NOTEBOOK), resources=resources
    )
    return html


def test_the_students_html_and_javascript_are_not_live_in_the_autograded_notebook_the_feedback_or_the_formgrader(
    course,
):
    cells = json.loads(autograded_text(course, "scripter"))["cells"]
    notes = "".join(next(cell for cell in cells if cell.get("id") == "notes")["source"])
    # the student's words kept
    assert (
        "<script" not in notes and "<img" not in notes and "My notes" in notes and "a list" in notes
    )
    shown = [
        output.get("data", {})
        for cell in cells
        if cell["cell_type"] == "code"
        for output in cell["outputs"]
    ]
    # the HTML output kept, cleaned
    assert {"text/html", "text/plain"} in [set(data) for data in shown]
    assert not [data for data in shown if "application/javascript" in data]
    html = "".join("".join(data.get("text/html", "")) for data in shown)
    assert "<b>bold</b>" in html and "<script" not in html and "onclick" not in html
    for page in (feedback(course, "scripter"), formgrader_view(course, "scripter")):
        live = Live()
        # the cells: the formgrader's own buttons have handlers
        live.feed(page[page.index('id="notebook-container"') :])
        # the student's text is on the page only as text
        assert live.found == [] and "My notes" in page and "a list" in page
    assert gradebook_scores(course, "scripter") == {
        name: float(course["batch"]["flat"][name]) for name in NAMES
    }


class Live(HTMLParser):
    """What of a page a browser would run or fetch for the student: handlers, javascript: links, scripts holding the
    student's code, and images from another host."""

    def __init__(self):
        super().__init__()
        self.found, self.in_script = [], False

    def handle_starttag(self, tag, attrs):
        self.found += [
            f"<{tag} {name}>"
            for name, value in attrs
            if name.startswith("on") or "javascript:" in (value or "")
        ]
        self.found += [
            f"<{tag} src={value}>"
            for name, value in attrs
            if name == "src" and "elsewhere.example" in (value or "")
        ]
        self.in_script = tag == "script"

    def handle_endtag(self, tag):
        self.in_script = False

    def handle_data(self, data):
        if self.in_script and ("from a student" in data or "steal" in data):
            self.found.append(f"<script>{data[:60]}")


def test_a_module_that_is_the_reference_is_said_to_the_instructor_only(course):
    assert "For the instructor" not in feedback(course, "flat") and "byte for byte" not in feedback(
        course, "flat"
    )
    cells = json.loads(autograded_text(course, "flat"))["cells"]
    said = {
        c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["attention_by_hand"]
        for c in cells
        if "attention_by_hand" in c["metadata"]
    }
    assert said["test_scores"] == {"same_as_reference": True} and said["test_softmax"] == {
        "same_as_reference": False
    }
    assert (
        "For the instructor: flat's masking.py, scores.py are byte for byte the kit's reference solution"
        in course["log"]
    )


def test_a_zip_holding_a_folder_named_like_a_classmates_files_nothing_as_the_classmate(course):
    assert (
        gradebook_scores(course, "flat")["softmax"] == float(course["batch"]["flat"]["softmax"]) > 0
    )
    assert float(course["export"]["aaron"]["score"]) == 0.0


@pytest.mark.parametrize("student, why", [("bomb", "more than 32 MiB"), ("linker", "a link")])
def test_an_upload_past_the_bounds_or_of_a_link_alone_gets_a_row_saying_why_and_nothing_else(
    course, student, why
):
    assert float(course["export"][student]["score"]) == 0.0
    said = feedback(course, student)
    assert "Your upload was not unpacked" in said and why in said
    extracted = course["root"] / "downloaded" / ASSIGNMENT / "extracted"
    assert (
        sum(
            path.stat().st_size
            for path in extracted.rglob("*")
            if path.is_file() and not path.is_symlink()
        )
        < 4 << 20
    )
    assert not [path for path in extracted.rglob("*") if path.is_symlink()]


def test_grader_export_gives_every_uploader_one_row_with_the_id_and_name_moodle_gave(
    course, tmp_path
):
    out = tmp_path / "moodle.csv"
    run(course["root"], None, "grader", "export", "gradebook.db", "--to", "csv", "--out", str(out))
    with out.open(encoding="utf-8") as f:
        rows = {r["student id"]: r for r in csv.DictReader(f)}
    assert set(rows) == set(course["export"])  # every student nbgrader exports, one row each
    # from Moodle's folder names, at zip_collect
    assert all(rows[s]["student name"] == f"Student {s}" for s in rows)
    # an upload that gave nothing: 0, and why
    assert rows["essay"]["total"] == "0.0" and rows["essay"]["reason"]
    for student in SHAPES:
        assert float(rows[student]["total"]) == float(course["batch"][student]["total"])


def test_a_canvas_download_gives_every_uploader_the_id_and_name_canvas_gave(tmp_path):
    assert f"'{CANVAS_PATTERN}'" in (KIT_ROOT / "docs" / "instructors.md").read_text(
        encoding="utf-8"
    )
    course, env = tmp_path / "course", environment(tmp_path / "instructor")
    course.mkdir()
    run(course, None, "grader", "nbgrader", ".")
    run(course, env, "nbgrader", "generate_assignment", ASSIGNMENT)
    release = course / "release" / ASSIGNMENT
    archive = course / "downloaded" / ASSIGNMENT / "archive" / "submissions.zip"
    archive.parent.mkdir(parents=True)
    folder = io.BytesIO()
    with zipfile.ZipFile(folder, "w") as inner:
        for file in sorted(release.rglob("*")):
            inner.write(file, file.relative_to(release.parent))
    with zipfile.ZipFile(
        archive, "w"
    ) as download:  # Canvas's: lastfirst_[LATE_]USER_ATTACHMENT_FILE
        for name in MODULES:
            download.write(release / "exercises" / f"{name}.py", f"lovelaceada_1001_5001_{name}.py")
        download.write(release / NOTEBOOK, f"lovelaceada_1001_5002_{NOTEBOOK}")
        download.writestr(f"hopperg_LATE_1002_5003_{ASSIGNMENT}.zip", folder.getvalue())
    run(
        course,
        env,
        "nbgrader",
        "zip_collect",
        ASSIGNMENT,
        f"--FileNameCollectorPlugin.named_regexp={CANVAS_PATTERN}",
    )
    for student in ("1001", "1002"):
        submitted = course / "submitted" / student / ASSIGNMENT
        assert (submitted / NOTEBOOK).is_file() and (
            submitted / "exercises" / "scores.py"
        ).is_file()
    out = tmp_path / "canvas.csv"
    run(course, None, "grader", "export", "gradebook.db", "--to", "canvas", "--out", str(out))
    with out.open(encoding="utf-8") as f:
        rows = list(csv.reader(f))[2:]  # after the head and Points Possible
    assert {row[1]: row[0] for row in rows} == {"1001": "lovelaceada", "1002": "hopperg"}
