"""The nbgrader round trip with real nbgrader: generate, release, collect, autograde, export.

Five students in one temporary course, two of them collected from an LMS-style zip download: correct,
partly correct (and tampering with the locked cells), blank, hanging, and noisy (warnings and stderr,
and files named like libraries).
Every student's score per exercise in nbgrader's gradebook must equal what `grader check --json`
gives the same files.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from survivors import sleepers

from grader.course import assignment as nbgrader_export
from grader.course import cells as nbgrader_cell
from grader.course.assignment import export
from grader.exercises import BY_NAME, NAMES
from grader.paths import EXERCISES_DIR, MODULES, SOLUTIONS_DIR

try:
    from nbgrader.api import Gradebook
except ImportError:  # reported by the course fixture, so that the round trip fails rather than skips
    Gradebook = None

pytestmark = pytest.mark.linux("grading with nbgrader is done on Linux; the process checks here read /proc and run sleep")
round_trip = pytest.mark.nbgrader  # select or skip the slow round trip with -m nbgrader / -m "not nbgrader"

ASSIGNMENT = "attention-by-hand"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
LMS_PATTERN = r".*/[^/]+_(?P<student_id>\w+)_assignsubmission_file_/(?P<file_id>.+)"  # Moodle's layout

NAIVE_SOFTMAX = '''
import numpy as np


def softmax(x):
    """Softmax without subtracting the row's maximum: overflows for large scores."""
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)
'''

HANGING_SGD_STEP = '''
def sgd_step(params, grads, lr):
    """A loop over the names that never moves on to the next one, so it never ends."""
    name = next(iter(params))
    while name in params:
        params[name] = params[name] - lr * grads[name]

'''

NOISY_SCORES = '''
import sys
import warnings

import numpy as np


def attention_scores(q, k):
    """Right, and noisy: a RuntimeWarning, numpy's own warning and a line on stderr."""
    warnings.warn("checking my scores", RuntimeWarning)
    np.divide(np.ones(1), np.zeros(1))
    print("debug: scores", q.shape, k.shape, file=sys.stderr)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
'''

# Files that would break the grading cells if the kernel imported them instead of the real ones.
SHADOWS = {
    "grader.py": "def grade(name):\n    return 0.0\n",
    "numpy.py": "__version__ = 'a student file'\n",
    "hypothesis.py": "raise ImportError('a student file named hypothesis.py')\n",
}


def nbgrader(course: Path, *args: str) -> str:
    """Run an nbgrader command in the course; its combined output, failing the test if it fails."""
    scripts = str(Path(sys.executable).parent)  # nbgrader runs its own `alembic` from there
    env = dict(os.environ, PATH=scripts + os.pathsep + os.environ.get("PATH", ""))
    env["JUPYTER_CONFIG_DIR"] = str(course.parent / "jupyter-config")  # no user-wide nbgrader settings
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}"
    return run.stdout + run.stderr


def grader_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the kit's command line as an instructor would."""
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def student_copy(release: Path, folder: Path, modules: dict[str, str] | None = None) -> Path:
    """A student's folder: the released files, with some modules replaced by the given sources."""
    shutil.copytree(release, folder)
    for name, source in (modules or {}).items():
        (folder / "exercises" / f"{name}.py").write_text(source, encoding="utf-8")
    return folder


def solution(name: str) -> str:
    """The reference module's source."""
    return (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8")


def replace_function(source: str, name: str, new: str) -> str:
    """The module's source with one top-level function replaced by new."""
    head, _, rest = source.partition(f"\ndef {name}(")
    return head + new + rest[rest.index("\ndef ") :]


def edit_notebook(folder: Path, change) -> None:
    """Apply change(cells) to the student's notebook."""
    path = folder / NOTEBOOK
    notebook = json.loads(path.read_text(encoding="utf-8"))
    change(notebook["cells"])
    path.write_text(json.dumps(notebook), encoding="utf-8")


def tamper(cells) -> None:
    """What a student might try: every grading cell replaced by a large score, the kit patched."""
    for cell in cells:
        if cell["metadata"].get("nbgrader", {}).get("grade"):
            cell["source"] = "1000.0"
    cells.insert(0, {"cell_type": "code", "execution_count": None, "id": "mine", "metadata": {}, "outputs": [],
                     "source": "import grader.course.cells\ngrader.course.cells.grade = lambda *args: 1000.0"})


def import_shadows(cells) -> None:
    """A cell of the student's, first in the notebook, that imports their look-alike modules."""
    cells.insert(0, {"cell_type": "code", "execution_count": None, "id": "mine", "metadata": {}, "outputs": [],
                     "source": "import grader, numpy\ntry:\n    import hypothesis\nexcept ImportError:\n    pass"})


def students(release: Path, staging: Path) -> dict[str, Path]:
    """The five submissions, each a folder shaped like the release; each kind of the issue's list is in one."""
    everything = {name: solution(name) for name in MODULES}
    modules = {
        "correct": everything,
        "partial": {"scores": solution("scores"), "masking": solution("masking"), "softmax": NAIVE_SOFTMAX},
        "blank": {},
        "hanging": everything | {"training": replace_function(solution("training"), "sgd_step", HANGING_SGD_STEP)},
        "noisy": everything | {"scores": NOISY_SCORES},
    }
    folders = {student: student_copy(release, staging / student, sources) for student, sources in modules.items()}
    for name, source in SHADOWS.items():  # the noisy student also shadows libraries
        (folders["noisy"] / name).write_text(source, encoding="utf-8")
    edit_notebook(folders["noisy"], import_shadows)
    edit_notebook(folders["partial"], tamper)  # and the partly correct one tampers with the locked cells
    return folders


def lms_download(folders: dict[str, Path], archive: Path) -> None:
    """An LMS bulk download (Moodle's layout): one folder per student, named with their id."""
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as download:
        for student, folder in folders.items():
            for file in sorted(folder.rglob("*")):
                if file.is_file():
                    download.write(file, f"{student.title()} Student_{student}_assignsubmission_file_/{file.relative_to(folder)}")


def expected_scores(folder: Path, json_file: Path) -> dict[str, float]:
    """Points per exercise from `grader check --json` on the student's modules."""
    run = grader_cli("check", "--submission", str(folder / "exercises"), "--json", str(json_file), cwd=json_file.parent)
    assert run.returncode in (0, 1) and json_file.is_file(), run.stdout + run.stderr
    return {exercise["name"]: exercise["points"] for exercise in json.loads(json_file.read_text())["exercises"]}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course taken through the whole round trip; the test functions read its results."""
    if Gradebook is None:
        pytest.fail("nbgrader is not installed in this environment: install the kit with its nbgrader extra, "
                    "pip install -e '.[test,nbgrader]', to run the nbgrader round trip.")
    root = tmp_path_factory.mktemp("nbgrader")
    course = root / "course"
    exported = grader_cli("nbgrader", str(course), cwd=root)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    nbgrader(course, "generate_assignment", ASSIGNMENT)
    release = course / "release" / ASSIGNMENT

    folders = students(release, root / "staging")
    lms = {name: folders.pop(name) for name in ("correct", "partial")}
    lms_download(lms, course / "downloaded" / ASSIGNMENT / "archive" / "moodle-download.zip")
    nbgrader(course, "zip_collect", ASSIGNMENT, f"--FileNameCollectorPlugin.named_regexp={LMS_PATTERN}",
             "--FileNameCollectorPlugin.valid_ext=['.ipynb', '.py']")
    for student, folder in folders.items():
        shutil.copytree(folder, course / "submitted" / student / ASSIGNMENT)
    folders |= lms

    with ThreadPoolExecutor(max_workers=1) as background:  # the second core checks while nbgrader grades
        checks = {
            student: background.submit(expected_scores, folder, root / f"{student}.json")
            for student, folder in folders.items()
        }
        started = time.monotonic()
        nbgrader(course, "autograde", ASSIGNMENT)
        autograde_seconds = time.monotonic() - started
        nbgrader(course, "export")
        expected = {student: check.result() for student, check in checks.items()}
    return {"root": course, "release": release, "folders": folders, "expected": expected, "autograde_seconds": autograde_seconds}


@round_trip
def test_release_holds_neither_solutions_nor_hidden_tests(course):
    release = course["release"]
    text = (release / NOTEBOOK).read_text(encoding="utf-8")
    assert "BEGIN HIDDEN TESTS" not in text and "import grade" not in text and "grade(" not in text
    assert sorted(p.name for p in (release / "exercises").iterdir()) == sorted(["__init__.py"] + [f"{m}.py" for m in MODULES])
    for module in MODULES:
        released = (release / "exercises" / f"{module}.py").read_text(encoding="utf-8")
        assert released == (EXERCISES_DIR / f"{module}.py").read_text(encoding="utf-8")
        assert "raise NotImplementedError" in released
    assert not list(release.rglob("solutions*"))


@round_trip
def test_release_has_one_locked_graded_cell_per_exercise(course):
    cells = json.loads((course["release"] / NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    graded = [cell["metadata"]["nbgrader"] for cell in cells if cell["metadata"].get("nbgrader", {}).get("grade")]
    assert [(meta["grade_id"], meta["points"], meta["locked"]) for meta in graded] == [
        (f"test_{name}", BY_NAME[name].points, True) for name in NAMES
    ]


@round_trip
def test_zip_collect_took_the_lms_download(course):
    for student in ("correct", "partial"):
        submitted = course["root"] / "submitted" / student / ASSIGNMENT
        assert (submitted / NOTEBOOK).is_file()
        for module in MODULES:
            assert (submitted / "exercises" / f"{module}.py").read_bytes() == (
                course["folders"][student] / "exercises" / f"{module}.py"
            ).read_bytes()


@round_trip
@pytest.mark.parametrize("student", ["correct", "partial", "blank", "hanging", "noisy"])
def test_gradebook_scores_equal_grader_check(course, student):
    assert (course["root"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).is_file(), "autograde left no notebook"
    with Gradebook(f"sqlite:///{course['root'] / 'gradebook.db'}") as gradebook:
        scores = {
            name: gradebook.find_grade(f"test_{name}", ASSIGNMENT, ASSIGNMENT, student).score for name in NAMES
        }
    assert scores == course["expected"][student]


@round_trip
def test_expected_scores_are_what_each_submission_deserves(course):
    expected = course["expected"]
    assert expected["correct"] == {name: BY_NAME[name].points for name in NAMES}
    assert expected["blank"] == dict.fromkeys(NAMES, 0.0)
    assert 0 < expected["partial"]["softmax"] < BY_NAME["softmax"].points  # partial credit within an exercise
    assert expected["hanging"]["training"] < BY_NAME["training"].points
    assert expected["noisy"]["scores"] == BY_NAME["scores"].points


@round_trip
def test_grading_cells_show_the_report_and_write_nothing_to_stderr(course):
    for student in ("noisy", "hanging"):
        notebook = json.loads((course["root"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).read_text())
        for cell in notebook["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade"):
                kinds = [(output["output_type"], output.get("name")) for output in cell["outputs"]]
                assert kinds == [("stream", "stdout"), ("execute_result", None)], (student, cell["outputs"])
                assert "Hypothesis seed" in "".join(cell["outputs"][0]["text"])


def outputs(course, student: str, cell_id: str) -> str:
    """The text a cell of the student's autograded notebook printed."""
    notebook = json.loads((course["root"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).read_text())
    cell = next(cell for cell in notebook["cells"] if cell.get("id") == cell_id)
    return "".join("".join(output.get("text", "")) for output in cell["outputs"])


@round_trip
def test_a_try_cell_stops_a_hanging_function_at_its_limit(course):
    said = outputs(course, "hanging", "try-training")
    assert f"sgd_step did not return within {nbgrader_cell.TRY_LIMIT:g} s" in said, said
    # one try cell left to nbgrader's cell timeout would cost that timeout alone
    assert course["autograde_seconds"] < nbgrader_export.CELL_TIMEOUT / 2


@round_trip
def test_try_cells_show_what_the_functions_return(course):
    assert "[0.09 , 0.245, 0.665]" in outputs(course, "correct", "try-softmax")
    assert "params after the call {'w': array([0.95, 2.05])}" in outputs(course, "correct", "try-training")
    said = outputs(course, "blank", "try-scores")
    assert "attention_scores is not written yet" in said and "exercises/scores.py" in said


@round_trip
def test_export_writes_the_grades_csv(course):
    lines = (course["root"] / "grades.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    rows = {row["student_id"]: row for row in (dict(zip(header, line.split(","))) for line in lines[1:])}
    assert set(rows) == set(course["expected"])
    for student, scores in course["expected"].items():
        assert float(rows[student]["score"]) == pytest.approx(sum(scores.values()))
        assert float(rows[student]["max_score"]) == 100.0


def nbgrader_settings(course: Path):
    """What nbgrader itself makes of the course's nbgrader_config.py."""
    if Gradebook is None:
        pytest.fail("nbgrader is not installed in this environment: pip install -e '.[test,nbgrader]'.")
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return Autograde(config=config).exclude_overwriting, Execute(config=config).timeout


def test_export_writes_the_source_assignment_and_the_settings(tmp_path):
    course = tmp_path / "course"
    assert export(course) == 0
    source = course / "source" / ASSIGNMENT
    assert sorted(p.name for p in (source / "exercises").iterdir()) == sorted(["__init__.py"] + [f"{m}.py" for m in MODULES])
    assert json.loads((source / NOTEBOOK).read_text(encoding="utf-8"))["metadata"]["kernelspec"]["name"] == "python3"
    keep, timeout = nbgrader_settings(course)
    assert keep == {ASSIGNMENT: [f"exercises/{m}.py" for m in MODULES]}
    assert timeout > nbgrader_cell.LIMIT


def test_export_leaves_a_course_config_alone_and_says_what_to_add(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.course_id = 'nlp'\n")
    assert export(course, assignment="week4") == 0
    assert (course / "nbgrader_config.py").read_text() == "c = get_config()\nc.CourseDirectory.course_id = 'nlp'\n"
    said = capsys.readouterr().out
    assert "'week4': ['exercises/scores.py'" in said and "ExecutePreprocessor.timeout" in said
    assert (course / "source" / "week4" / "week4.ipynb").is_file()


def test_export_refuses_to_replace_an_assignment_without_force(tmp_path, capsys):
    course = tmp_path / "course"
    assert export(course) == 0
    notebook = course / "source" / ASSIGNMENT / NOTEBOOK
    notebook.write_text("the instructor's edits")
    assert export(course) == 1
    assert "--force" in capsys.readouterr().err
    assert notebook.read_text() == "the instructor's edits"
    assert export(course, force=True) == 0
    assert notebook.read_text() != "the instructor's edits"


@pytest.mark.parametrize("name", ["a b", "../up", "", "week/4"])
def test_export_refuses_an_assignment_name_nbgrader_cannot_use(tmp_path, name):
    assert export(tmp_path / "course", assignment=name) == 2
    assert not (tmp_path / "course").exists()


def test_a_grading_cell_stops_the_checks_at_its_limit(monkeypatch):
    monkeypatch.setattr(nbgrader_cell, "LIMIT", 1)
    output, finished, status = nbgrader_cell.run([sys.executable, "-c", "import time; print('started', flush=True); time.sleep(60)"])
    assert (output, finished, status) == ("started\n", False, None)


def test_a_grading_cell_gives_zero_and_says_why_when_the_modules_are_missing(tmp_path, capsys):
    assert nbgrader_cell.grade("softmax", tmp_path / "exercises") == 0.0
    said = capsys.readouterr().out
    assert "Cannot check softmax" in said and "does not exist" in said


def student_modules(folder: Path, **sources: str) -> Path:
    """A student's exercises/ folder: the reference modules, some replaced by the given sources."""
    folder.mkdir()
    for name in ("__init__",) + MODULES:
        source = sources.get(name) or (EXERCISES_DIR / "__init__.py" if name == "__init__" else SOLUTIONS_DIR / f"{name}.py").read_text()
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return folder


def test_try_it_prints_what_the_function_returns(tmp_path, capsys):
    folder = student_modules(tmp_path / "exercises")
    nbgrader_cell.try_it("softmax", "softmax", np.array([[1.0, 2.0, 3.0]]), submission=folder)
    assert capsys.readouterr().out == "softmax returned array([[0.09 , 0.245, 0.665]])\n"


def test_try_it_reads_the_module_as_saved_at_each_call(tmp_path, capsys):
    folder = student_modules(tmp_path / "exercises")
    nbgrader_cell.try_it("scores", "attention_scores", np.ones((1, 4)), np.ones((1, 4)), submission=folder)
    (folder / "scores.py").write_text("def attention_scores(q, k):\n    raise NotImplementedError\n")
    nbgrader_cell.try_it("scores", "attention_scores", np.ones((1, 4)), np.ones((1, 4)), submission=folder)
    first, second = capsys.readouterr().out.split("\n", 1)
    assert first == "attention_scores returned array([[2.]])"
    assert "attention_scores is not written yet" in second and "exercises/scores.py" in second


def test_try_it_stops_a_function_that_never_returns(tmp_path, capsys):
    folder = student_modules(tmp_path / "exercises", softmax="def softmax(x):\n    while True:\n        pass\n")
    started = time.monotonic()
    nbgrader_cell.try_it("softmax", "softmax", np.ones((1, 3)), limit=1, submission=folder)
    assert time.monotonic() - started < 1 + 10
    assert "softmax did not return within 1 s" in capsys.readouterr().out


def test_try_it_survives_a_function_that_kills_its_parent_and_leaves_a_child(tmp_path, capsys):
    killer = """
import os, signal, subprocess

def softmax(x):
    subprocess.Popen(["sleep", "613"], start_new_session=True)
    os.kill(os.getppid(), signal.SIGKILL)
"""
    folder = student_modules(tmp_path / "exercises", softmax=killer)
    started = time.time()
    nbgrader_cell.try_it("softmax", "softmax", np.ones((1, 3)), submission=folder)
    out = capsys.readouterr().out
    # confined, the worker may not signal its parent; unconfined, it kills the process that ran it
    assert "Operation not permitted" in out or "softmax ended the process that ran it (signal 9)" in out, out
    assert sleepers(("613",), since=started) == []
