"""The nbgrader round trip with real nbgrader, as the instructor guide runs it, and the notebook attacks.

One course in a temporary folder: `grader nbgrader .`, generate, release; four students fetch, change
and submit through the exchange (two validate first), two come from an LMS download (one of them
uploaded a zip of the whole folder), five are copied into submitted/; collect, zip_collect,
autograde, generate_feedback, export.
The students: correct, partly correct (tampering with the locked cells), blank, hanging, noisy
(warnings, stderr, files named like libraries), and five whose own cells attack autograde: output
turned off, the reference copied over exercises/, the kernel killed, a loop that ignores Ctrl-C,
and writes into the gradebook and the other submissions. Every score in the gradebook must be what
`grader check --json` gives the files as submitted.
"""

import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import psutil
import pytest
from busy import allowed
from survivors import sleepers
from venvs import BIN, fresh_venv, pip_install

from grader.course.nbgrader import cells as nbgrader_cell
from grader.course.nbgrader.assignment import export
from grader.course.nbgrader.kernel import bwrap_problem
from grader.course.stubs import stub_source
from grader.exercises import BY_NAME, NAMES
from grader.paths import KIT_ROOT, MODULES, SOLUTIONS_DIR

try:
    from nbgrader.api import Gradebook
except (
    ImportError
):  # reported by the course fixture, so that the round trip fails rather than skips
    Gradebook = None

pytestmark = [
    pytest.mark.linux(
        "grading with nbgrader is done on Linux; the process checks here read /proc and run sleep"
    ),
    pytest.mark.slow,
]
# select or skip the slow round trip with -m nbgrader / -m "not nbgrader"
round_trip = pytest.mark.nbgrader

ASSIGNMENT = "attention-by-hand"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
LMS_PATTERN = (
    r".*?/[^/]+_(?P<student_id>\w+)_assignsubmission_file_/(?P<file_id>.+)"  # Moodle's layout
)
CELL_TIMEOUT = 10  # the test course's cell timeout (the generated config says 60)
SLEEPS = ("681", "683", "685")  # `sleep N` that the attackers' cells start and leave behind

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

QUIET = "get_ipython().ast_node_interactivity = 'none'  # no cell shows a value: nbgrader's full points\n"

KILLER = f"""\
import os, subprocess
subprocess.Popen(["sleep", "{SLEEPS[0]}"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    subprocess.Popen(["sleep", "{SLEEPS[1]}"])
    os._exit(0)
os.kill(os.getpid(), 9)
"""

SLEEPER = """\
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)  # the interrupt after the cell timeout does nothing
while True:
    pass
"""

WRITER = """\
import json, subprocess
from pathlib import Path
subprocess.Popen(["sleep", "{sleep}"], start_new_session=True)
wrote, refused = [], []
for path, text in {targets!r}.items():
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as file:
            file.write(text)
        wrote.append(path)
    except OSError as error:
        refused.append([path, type(error).__name__])
print("ATTACK", json.dumps({{"wrote": wrote, "refused": refused}}))
"""


def environment(
    home: Path, config_dir: Path | None = None, python: Path | None = None
) -> dict[str, str]:
    """nbgrader's environment: the venv's scripts first; home, Jupyter's folders and config inside the test's folder."""
    # nbgrader runs its own `alembic` from there
    scripts = str(Path(python or sys.executable).parent)
    env = dict(os.environ, PATH=scripts + os.pathsep + os.environ.get("PATH", ""), HOME=str(home))
    env.pop("PYTHONPATH", None)
    env.update(
        JUPYTER_CONFIG_DIR=str(config_dir or home / ".jupyter"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / ".ipython"),
    )
    return env


RAN: list[
    list[str]
] = []  # every command the round trip ran, as an instructor or a student types it


def nbgrader(cwd: Path, env: dict, *args: str, python: Path | None = None) -> str:
    """Run an nbgrader command (with the students' Python when given); its combined output, failing the test if it fails."""
    RAN.append(["nbgrader", *args])
    run = subprocess.run(
        [str(python or sys.executable), "-m", "nbgrader", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}"
    return run.stdout + run.stderr


def grader_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the kit's command line as an instructor would."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def solution(name: str) -> str:
    """The reference module's source."""
    return (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8")


def replace_function(source: str, name: str, new: str) -> str:
    """The module's source with one top-level function replaced by new."""
    head, _, rest = source.partition(f"\ndef {name}(")
    return head + new + rest[rest.index("\ndef ") :]


def code_cell(source: str) -> dict:
    """A code cell of the student's own, not run yet."""
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": "mine",
        "metadata": {},
        "outputs": [],
        "source": source,
    }


def add_cell(folder: Path, source: str) -> None:
    """A cell of the student's own, right after the notebook's setup cell."""
    path = folder / NOTEBOOK
    notebook = json.loads(path.read_text(encoding="utf-8"))
    at = next(n for n, cell in enumerate(notebook["cells"]) if cell.get("id") == "setup") + 1
    notebook["cells"].insert(at, code_cell(source))
    path.write_text(json.dumps(notebook), encoding="utf-8")


def tamper(folder: Path) -> None:
    """What a student might try: every graded cell replaced by a large score, the kit patched."""
    path = folder / NOTEBOOK
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade"):
            cell["source"] = "1000.0"
    notebook["cells"].insert(
        0,
        code_cell(
            "import grader.course.nbgrader.cells\ngrader.course.nbgrader.cells.check = lambda *args: None"
        ),
    )
    path.write_text(json.dumps(notebook), encoding="utf-8")


COPIER = """\
from pathlib import Path
import grader.paths
print("reference on disk:", (grader.paths.SOLUTIONS_DIR / "softmax.py").exists())
reference = {reference!r}  # a copy from a friend, then
for folder in ["exercises", "../../../submitted/copier/{assignment}/exercises"]:
    for name, text in reference.items():
        try:
            (Path(folder) / f"{{name}}.py").write_text(text)
            print("copied", folder, name)
        except OSError as error:
            print("refused", folder, name, type(error).__name__)
"""

# fetch, change and submit through nbgrader's exchange
EXCHANGE = ("correct", "blank", "quiet", "mallory")
# from an LMS download: partial's files one by one, zipper's folder as one zip
LMS = ("partial", "zipper")
# copied into submitted/ by the instructor
COPIED = ("hanging", "noisy", "copier", "killer", "sleeper")
STUDENTS = EXCHANGE + LMS + COPIED


def modules_of(student: str) -> dict[str, str]:
    """The modules each student wrote (the others stay stubs)."""
    everything = {name: solution(name) for name in MODULES}
    early = {name: solution(name) for name in ("scores", "masking")}
    hanging = everything | {
        "training": replace_function(solution("training"), "sgd_step", HANGING_SGD_STEP)
    }
    return {
        "correct": everything,
        "zipper": everything,
        "partial": early | {"softmax": NAIVE_SOFTMAX},
        "hanging": hanging,
        "noisy": everything | {"scores": NOISY_SCORES},
        "killer": early,
        "sleeper": early,
    }.get(student, {})


def targets(course: Path) -> dict[str, str]:
    """What mallory's cell tries to write: the gradebook, other students' submitted and autograded modules, the config."""
    found = {
        str(course / "gradebook.db"): "forged",
        str(course / "nbgrader_config.py"): "\nc.GradeModules.enabled = False\n",
    }
    for victim in ("quiet", "blank"):  # graded after and before mallory
        for step in ("submitted", "autograded"):
            found[str(course / step / victim / ASSIGNMENT / "exercises" / "softmax.py")] = (
                "\n" + solution("softmax")
            )
    found[str(course / "exchange" / "course" / "inbound" / "forged" / "timestamp.txt")] = (
        "2000-01-01 00:00:00"
    )
    return found


def change(student: str, folder: Path, course: Path) -> None:
    """What each student does to their copy of the assignment."""
    for name, source in modules_of(student).items():
        (folder / "exercises" / f"{name}.py").write_text(source, encoding="utf-8")
    cells = {
        "quiet": QUIET,
        "killer": KILLER,
        "sleeper": SLEEPER,
        "copier": COPIER.format(
            reference={name: solution(name) for name in MODULES}, assignment=ASSIGNMENT
        ),
        "mallory": WRITER.format(sleep=SLEEPS[2], targets=targets(course)),
        "noisy": "import grader, numpy\ntry:\n    import hypothesis\nexcept ImportError:\n    pass",
    }
    if student in cells:
        add_cell(folder, cells[student])
    if student == "noisy":  # files named like libraries, which the kernel imports
        for name, source in SHADOWS.items():
            (folder / name).write_text(source, encoding="utf-8")
    if student == "partial":
        tamper(folder)


def students_python(root: Path, course: Path) -> Path:
    """The students' environment: the student's kit that `grader nbgrader` wrote (for-students/kit), no reference in it."""
    venv = fresh_venv(root / "students-venv")
    pip_install(venv, "-e", str(course / "for-students" / "kit"))
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import grader.kit, importlib.util as u; print(grader.kit.KIND, u.find_spec('solutions'))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert probe.stdout.split() == ["student", "None"], probe.stdout + probe.stderr
    return python


def through_the_exchange(root: Path, course: Path, student: str, python: Path) -> tuple[Path, str]:
    """A student fetches the assignment, changes it, validates it (correct and blank only) and submits it, in the student's kit."""
    home = root / "students" / student
    (home / ".jupyter").mkdir(parents=True)
    shutil.copy(
        course / "for-students" / "nbgrader_config.py", home / ".jupyter" / "nbgrader_config.py"
    )
    env = environment(home, python=python)
    nbgrader(home, env, "fetch_assignment", ASSIGNMENT, python=python)
    change(student, home / ASSIGNMENT, course)
    said = (
        nbgrader(home, env, "validate", f"{ASSIGNMENT}/{NOTEBOOK}", python=python)
        if student in ("correct", "blank")
        else ""
    )
    # as root every student is root: say who submits
    nbgrader(home, env, "submit", ASSIGNMENT, "--student", student, python=python)
    return home / ASSIGNMENT, said


def lms_download(course: Path, staging: Path, archive: Path) -> dict[str, Path]:
    """An LMS bulk download (Moodle's layout): partial's files one by one, zipper's folder zipped as one upload."""
    folders = {}
    for student in LMS:
        folders[student] = folder = staging / student / ASSIGNMENT
        shutil.copytree(course / "release" / ASSIGNMENT, folder)
        change(student, folder, course)
    archive.parent.mkdir(parents=True)
    inner = staging / "zipper" / f"{ASSIGNMENT}.zip"
    with zipfile.ZipFile(inner, "w") as upload:
        for file in sorted(folders["zipper"].rglob("*")):
            upload.write(file, file.relative_to(folders["zipper"].parent))
    with zipfile.ZipFile(archive, "w") as download:
        for file in sorted(folders["partial"].rglob("*")):
            if file.is_file():
                download.write(
                    file,
                    f"Partial Student_partial_assignsubmission_file_/{file.relative_to(folders['partial'])}",
                )
        download.write(inner, f"Zipper Student_zipper_assignsubmission_file_/{inner.name}")
    return folders


def submissions(root: Path, course: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """Every student's folder as they submitted it, and what validate told two of them."""
    folders, validated, python = {}, {}, students_python(root, course)
    for student in EXCHANGE:
        folders[student], validated[student] = through_the_exchange(root, course, student, python)
    folders |= lms_download(
        course, root / "lms", course / "downloaded" / ASSIGNMENT / "archive" / "moodle.zip"
    )
    for student in COPIED:
        folders[student] = root / "copied" / student / ASSIGNMENT
        shutil.copytree(course / "release" / ASSIGNMENT, folders[student])
        change(student, folders[student], course)
        shutil.copytree(folders[student], course / "submitted" / student / ASSIGNMENT)
    return folders, validated


def expected_scores(folder: Path, json_file: Path) -> dict[str, float]:
    """Points per exercise from `grader check --json` on the student's modules."""
    run = grader_cli(
        "check",
        "--submission",
        str(folder / "exercises"),
        "--json",
        str(json_file),
        cwd=json_file.parent,
    )
    assert run.returncode in (0, 1) and json_file.is_file(), run.stdout + run.stderr
    return {
        exercise["name"]: exercise["points"]
        for exercise in json.loads(json_file.read_text())["exercises"]
    }


def left_running(root: Path, since: float) -> list[str]:
    """Processes an attacker started, or any process still working in the test's folder."""
    found = [f"sleep {pid}" for pid in sleepers(SLEEPS, since)]
    for process in psutil.process_iter(["pid", "cwd", "cmdline"]):
        if (
            process.info["cwd"]
            and Path(process.info["cwd"]).is_relative_to(root)
            and process.pid != os.getpid()
        ):
            found.append(f"{process.pid} {' '.join(process.info['cmdline'] or [])[:80]}")
    return found


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course taken through the whole round trip; the test functions read its results."""
    if Gradebook is None:
        pytest.fail(
            "nbgrader is not installed in this environment: install the kit with its nbgrader extra, "
            "pip install -e '.[test,nbgrader]', to run the nbgrader round trip."
        )
    root = tmp_path_factory.mktemp("nbgrader")
    course, env = root / "course", environment(root / "instructor")
    course.mkdir()
    exported = grader_cli("nbgrader", ".", cwd=course)
    RAN.append(["grader", "nbgrader", "."])
    assert exported.returncode == 0, exported.stdout + exported.stderr
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(
            f"\nc.RunNotebook.timeout = {CELL_TIMEOUT}  # the test's: small, so that a hang costs little\n"
        )
    nbgrader(course, env, "generate_assignment", ASSIGNMENT)
    nbgrader(course, env, "release_assignment", ASSIGNMENT)

    began = time.time()
    folders, validated = submissions(root, course)
    submitted = {
        student: {m: (folder / "exercises" / f"{m}.py").read_bytes() for m in MODULES}
        for student, folder in folders.items()
    }

    with ThreadPoolExecutor(
        max_workers=1
    ) as background:  # the second core checks while nbgrader grades
        checks = {
            student: background.submit(expected_scores, folder, root / f"{student}.json")
            for student, folder in folders.items()
        }
        collected = nbgrader(course, env, "collect", ASSIGNMENT)
        collected += nbgrader(
            course,
            env,
            "zip_collect",
            ASSIGNMENT,
            f"--FileNameCollectorPlugin.named_regexp={LMS_PATTERN}",
        )
        print(f"students' side: {time.time() - began:.0f} s")
        started = time.time()
        log = nbgrader(course, env, "autograde", ASSIGNMENT)
        seconds = time.time() - started
        print(f"autograde: {seconds:.0f} s")
        left = left_running(root, started)
        nbgrader(course, env, "generate_feedback", ASSIGNMENT)
        nbgrader(course, env, "export")
        expected = {student: check.result() for student, check in checks.items()}
    return {
        "root": course,
        "release": course / "release" / ASSIGNMENT,
        "folders": folders,
        "expected": expected,
        "validated": validated,
        "submitted": submitted,
        "collected": collected,
        "log": log,
        "seconds": seconds,
        "left": left,
    }


def autograded(course, student: str) -> dict:
    """The student's autograded notebook."""
    return json.loads(
        (course["root"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).read_text(
            encoding="utf-8"
        )
    )


def outputs(course, student: str, cell_id: str) -> str:
    """The text a cell of the student's autograded notebook printed."""
    cell = next(cell for cell in autograded(course, student)["cells"] if cell.get("id") == cell_id)
    return "".join("".join(output.get("text", "")) for output in cell["outputs"])


def confined(course) -> bool:
    """Whether autograde ran the kernels under bubblewrap (the log says so for each notebook)."""
    return "Started the notebook's kernel, confined by bubblewrap" in course["log"]


def guide_commands() -> list[list[str]]:
    """The nbgrader and `grader nbgrader` commands of the instructor guide's nbgrader section, as words."""
    guide = (KIT_ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    section = guide.partition("## Collecting grades with nbgrader")[2].partition("\n## ")[0]
    commands = []
    for block in section.split("```bash\n")[1:]:
        for line in block.partition("```")[0].replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["nbgrader"] or words[:2] == ["grader", "nbgrader"]:
                commands.append(words)
    return commands


@round_trip
def test_the_round_trip_runs_the_instructor_guides_commands(course):
    ran = [words[: words.index("--student")] if "--student" in words else words for words in RAN]
    guide = guide_commands()
    assert len(guide) >= 10 and [words for words in guide if words not in ran] == []


@round_trip
def test_release_holds_neither_solutions_nor_hidden_tests(course):
    release = course["release"]
    text = (release / NOTEBOOK).read_text(encoding="utf-8")
    assert "BEGIN HIDDEN TESTS" not in text and "not_graded_here" not in text
    assert sorted(p.name for p in (release / "exercises").iterdir()) == sorted(
        ["__init__.py"] + [f"{m}.py" for m in MODULES]
    )
    for module in MODULES:
        released = (release / "exercises" / f"{module}.py").read_text(encoding="utf-8")
        assert released == stub_source(module)
        assert "raise NotImplementedError" in released
    assert not list(release.rglob("solutions*"))


@round_trip
def test_release_has_one_locked_graded_cell_per_exercise(course):
    cells = json.loads((course["release"] / NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    graded = [
        cell["metadata"]["nbgrader"]
        for cell in cells
        if cell["metadata"].get("nbgrader", {}).get("grade")
    ]
    assert [(meta["grade_id"], meta["points"], meta["locked"]) for meta in graded] == [
        (f"test_{name}", BY_NAME[name].points, True) for name in NAMES
    ]


@round_trip
def test_validate_is_honest_about_a_blank_notebook(course):
    blank, correct = course["validated"]["blank"], course["validated"]["correct"]
    assert (
        "Success! Your notebook passes all the tests" not in blank
        and "VALIDATION FAILED ON 5 CELL(S)" in blank
    ), blank
    assert "NotPassed: softmax: not started. Fix exercises/softmax.py, save, run again." in blank
    assert "Success! Your notebook passes all the tests" in correct, correct


@round_trip
def test_every_submission_reached_submitted_as_the_student_left_it(course):
    """collect took the exchange's, zip_collect the LMS download's: the loose files and the zip of a whole folder."""
    for student, modules in course["submitted"].items():
        folder = course["root"] / "submitted" / student / ASSIGNMENT
        assert (folder / NOTEBOOK).is_file(), student
        assert {m: (folder / "exercises" / f"{m}.py").read_bytes() for m in MODULES} == modules, (
            student
        )


@round_trip
@pytest.mark.parametrize("student", STUDENTS)
def test_gradebook_scores_equal_grader_check(course, student):
    assert (course["root"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).is_file(), (
        "autograde left no notebook"
    )
    with Gradebook(f"sqlite:///{course['root'] / 'gradebook.db'}") as gradebook:
        scores = {
            name: gradebook.find_grade(f"test_{name}", ASSIGNMENT, ASSIGNMENT, student).score
            for name in NAMES
        }
    assert scores == course["expected"][student]


@round_trip
def test_expected_scores_are_what_each_submission_deserves(course):
    expected, full = course["expected"], {name: BY_NAME[name].points for name in NAMES}
    early = {
        name: (BY_NAME[name].points if name in ("scores", "masking") else 0.0) for name in NAMES
    }
    assert expected["correct"] == expected["zipper"] == full
    for student in ("blank", "quiet", "copier", "mallory"):  # the attackers' own files are stubs
        assert expected[student] == dict.fromkeys(NAMES, 0.0), student
    assert expected["killer"] == expected["sleeper"] == early
    # partial credit within an exercise
    assert 0 < expected["partial"]["softmax"] < BY_NAME["softmax"].points
    assert expected["hanging"]["training"] < BY_NAME["training"].points
    assert expected["noisy"]["scores"] == BY_NAME["scores"].points


@round_trip
def test_graded_cells_show_the_kits_report_and_points_whatever_the_cells_did(course):
    for student in ("noisy", "hanging", "quiet", "killer", "partial"):
        for cell in autograded(course, student)["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade"):
                kinds = [(output["output_type"], output.get("name")) for output in cell["outputs"]]
                assert kinds == [("stream", "stdout"), ("execute_result", None)], (
                    student,
                    cell["outputs"],
                )
                text = "".join(cell["outputs"][0]["text"])
                assert "Graded from exercises/ as submitted" in text and "Hypothesis seed" in text
                assert "`grader " in text and "python -m grader" not in text, text


@round_trip
def test_a_cell_that_hangs_or_kills_the_kernel_costs_at_most_the_cell_timeout(course):
    assert "the kernel died while this cell ran" in outputs(course, "killer", "mine")
    assert f"did not finish within {CELL_TIMEOUT} s" in outputs(course, "sleeper", "mine")
    for student in ("killer", "sleeper"):
        assert outputs(course, student, "try-softmax") == "", (
            "the cells after the one that stopped the run are not run"
        )
    # each student's final notebook is written when its grading ends, in the order of the students' names
    order = sorted(STUDENTS)
    ended = {
        s: (course["root"] / "autograded" / s / ASSIGNMENT / NOTEBOOK).stat().st_mtime
        for s in order
    }
    for student in ("killer", "sleeper"):
        before = order[order.index(student) - 1]
        assert ended[student] - ended[before] < CELL_TIMEOUT + 30, (
            student,
            ended[student] - ended[before],
        )


@round_trip
def test_a_cell_that_copies_the_reference_over_exercises_changes_no_grade(course):
    said = outputs(course, "copier", "mine")
    # the kernel's copy of the folder is the student's to change...
    assert "copied exercises softmax" in said
    # ...and no try cell runs it at autograde
    assert outputs(course, "copier", "try-softmax") == not_run("softmax")
    if confined(course):  # ...the submitted one is not, nor is the kit's reference to be seen
        assert "refused ../../../submitted/copier" in said and "reference on disk: False" in said, (
            said
        )


@round_trip
def test_a_cell_that_writes_the_gradebook_or_other_submissions_changes_nothing(course):
    """Confined, every write is refused; unconfined, the grades were taken before any cell ran and still hold."""
    said = outputs(course, "mallory", "mine")
    attack = json.loads(said.partition("ATTACK ")[2].splitlines()[0])
    if confined(course):
        assert attack["wrote"] == [] and len(attack["refused"]) == len(targets(course["root"]))
    for student in ("quiet", "blank"):
        folder = course["root"] / "submitted" / student / ASSIGNMENT / "exercises"
        assert {m: (folder / f"{m}.py").read_bytes() for m in MODULES} == course["submitted"][
            student
        ]
    assert "GradeModules.enabled" not in (course["root"] / "nbgrader_config.py").read_text()


@round_trip
def test_every_process_the_cells_started_is_gone(course):
    assert course["left"] == []
    assert confined(course) == (bwrap_problem() == ""), (
        "autograde confines the kernel wherever bubblewrap can run"
    )


@round_trip
def test_no_litter_reaches_the_autograded_or_feedback_folders(course):
    for step in ("autograded", "feedback"):
        folder = course["root"] / step
        litter = [
            str(p)
            for p in folder.rglob("*")
            if p.name in (".hypothesis", "__pycache__") or p.is_symlink()
        ]
        assert litter == [], litter
    assert not (course["root"] / ".hypothesis").exists()
    feedback = (
        course["root"] / "feedback" / "noisy" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    ).read_text(encoding="utf-8")
    assert "grader check" in feedback and "python -m grader" not in feedback


@round_trip
def test_try_cells_at_autograde_run_no_student_code_and_say_the_graded_cells_grade_the_files(
    course,
):
    for student in ("correct", "blank", "hanging"):
        for module in MODULES:
            assert outputs(course, student, f"try-{module}") == not_run(module), (student, module)


def not_run(module: str) -> str:
    """What a try cell prints at autograde."""
    return f"Not run at grading: the graded cell below grades exercises/{module}.py as you submitted it.\n"


@round_trip
def test_export_writes_the_grades_csv(course):
    lines = (course["root"] / "grades.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    rows = {
        row["student_id"]: row for row in (dict(zip(header, line.split(","))) for line in lines[1:])
    }
    assert set(rows) == set(course["expected"])
    for student, scores in course["expected"].items():
        assert float(rows[student]["score"]) == pytest.approx(sum(scores.values()))
        assert float(rows[student]["max_score"]) == 100.0


def nbgrader_settings(course: Path):
    """What nbgrader itself makes of the course's nbgrader_config.py."""
    if Gradebook is None:
        pytest.fail(
            "nbgrader is not installed in this environment: pip install -e '.[test,nbgrader]'."
        )
    from nbgrader.converters import Autograde
    from traitlets.config.loader import PyFileConfigLoader

    from grader.course.nbgrader.execute import RunNotebook

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return config, Autograde(config=config), RunNotebook(config=config)


def test_export_writes_the_source_assignment_the_settings_and_the_students_side(tmp_path):
    course = tmp_path / "course"
    assert export(course) == 0
    source = course / "source" / ASSIGNMENT
    assert sorted(p.name for p in (source / "exercises").iterdir()) == sorted(
        ["__init__.py"] + [f"{m}.py" for m in MODULES]
    )
    assert (
        json.loads((source / NOTEBOOK).read_text(encoding="utf-8"))["metadata"]["kernelspec"][
            "name"
        ]
        == "python3"
    )
    config, autograde, run = nbgrader_settings(course)
    assert autograde.exclude_overwriting == {ASSIGNMENT: [f"exercises/{m}.py" for m in MODULES]}
    steps = autograde.autograde_preprocessors
    assert steps.index("grader.course.nbgrader.autograde.GradeModules") < steps.index(
        "grader.course.nbgrader.execute.RunNotebook"
    )
    assert steps.index("grader.course.nbgrader.autograde.WriteGrades") < steps.index(
        "nbgrader.preprocessors.SaveAutoGrades"
    )
    assert config.CourseDirectory.course_id == "course" and config.Exchange.root == str(
        course.resolve() / "exchange"
    )
    assert (
        (course / "exchange").is_dir() and run.timeout == 60 and run.shutdown_kernel == "immediate"
    )
    students = (course / "for-students" / "nbgrader_config.py").read_text()
    assert (
        "c.CourseDirectory.course_id = 'course'" in students
        and str(course.resolve() / "exchange") in students
    )


def test_export_leaves_a_course_config_alone_and_says_what_to_add(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'nlp'\n"
    )
    assert export(course, assignment="week4") == 0
    assert (
        course / "nbgrader_config.py"
    ).read_text() == "c = get_config()\nc.CourseDirectory.course_id = 'nlp'\n"
    said = capsys.readouterr().out
    assert (
        "'week4': ['exercises/scores.py'" in said
        and "grader.course.nbgrader.autograde.GradeModules" in said
    )
    # the course has its own id: nbgrader's default exchange, or its own
    assert "Exchange.root" not in said
    assert "course_id = 'nlp'" in (course / "for-students" / "nbgrader_config.py").read_text()
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


def test_a_graded_cell_stops_the_checks_at_its_limit(monkeypatch):
    monkeypatch.setattr(nbgrader_cell, "LIMIT", 1)
    output, finished, status = nbgrader_cell.run(
        [sys.executable, "-c", "import time; print('started', flush=True); time.sleep(60)"]
    )
    assert (output, finished, status) == ("started\n", False, None)


def test_a_graded_cell_says_why_when_the_modules_are_missing(tmp_path, capsys):
    with pytest.raises(nbgrader_cell.NotPassed, match="could not run"):
        nbgrader_cell.check("softmax", tmp_path / "exercises")
    said = capsys.readouterr().out
    assert "Cannot check softmax" in said and "does not exist" in said


def student_modules(folder: Path, **sources: str) -> Path:
    """A student's exercises/ folder: the reference modules, some replaced by the given sources."""
    folder.mkdir()
    for name in ("__init__",) + MODULES:
        source = sources.get(name) or (
            stub_source(name) if name == "__init__" else (SOLUTIONS_DIR / f"{name}.py").read_text()
        )
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return folder


def test_a_graded_cell_passes_quietly_and_fails_in_one_line(tmp_path, capsys, monkeypatch):
    folder = student_modules(tmp_path / "exercises", softmax=NAIVE_SOFTMAX)
    monkeypatch.chdir(tmp_path)
    nbgrader_cell.check("scores", folder)
    assert capsys.readouterr().out.endswith("scores passes every check.\n")
    with pytest.raises(nbgrader_cell.NotPassed) as failed:
        nbgrader_cell.check("softmax", folder)
    (said,) = failed.value._render_traceback_()
    named = re.fullmatch(
        r"NotPassed: softmax: some checks fail \((.+)\)\. Fix exercises/softmax\.py, save, run again\.",
        said,
    )
    report = capsys.readouterr().out
    assert named, said  # which checks fail, by name, as in the report above it
    assert all(
        f"softmax.{name}" in report for name in named.group(1).split(" and ")[0].split(", ")
    ), (said, report)
    assert "`grader check softmax`" in report and "python -m grader" not in report


def test_a_graded_cell_run_by_nbgraders_own_kernel_at_autograde_gives_nothing(monkeypatch):
    nbgrader_cell.not_graded_here("softmax")  # the student's kernel, validate: nothing to say
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(nbgrader_cell.NotGraded, match="add the kit's lines"):
        nbgrader_cell.not_graded_here("softmax")


def test_try_it_at_autograde_runs_nothing_and_says_so(tmp_path, capsys, monkeypatch):
    folder = student_modules(
        tmp_path / "exercises", softmax="open('ran', 'w')\ndef softmax(x):\n    open('ran', 'w')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    nbgrader_cell.try_it("softmax", "softmax", np.ones((1, 3)), submission=folder)
    assert capsys.readouterr().out == not_run("softmax")
    assert not (tmp_path / "ran").exists() and not (folder / "ran").exists()


def test_try_it_prints_what_the_function_returns(tmp_path, capsys):
    folder = student_modules(tmp_path / "exercises")
    nbgrader_cell.try_it("softmax", "softmax", np.array([[1.0, 2.0, 3.0]]), submission=folder)
    assert capsys.readouterr().out == "softmax returned array([[0.09 , 0.245, 0.665]])\n"


def test_try_it_reads_the_module_as_saved_at_each_call(tmp_path, capsys):
    folder = student_modules(tmp_path / "exercises")
    nbgrader_cell.try_it(
        "scores", "attention_scores", np.ones((1, 4)), np.ones((1, 4)), submission=folder
    )
    (folder / "scores.py").write_text(
        "def attention_scores(q, k):\n    raise NotImplementedError\n"
    )
    nbgrader_cell.try_it(
        "scores", "attention_scores", np.ones((1, 4)), np.ones((1, 4)), submission=folder
    )
    first, second = capsys.readouterr().out.split("\n", 1)
    assert first == "attention_scores returned array([[2.]])"
    assert "attention_scores is not written yet" in second and "exercises/scores.py" in second


def test_try_it_stops_a_function_that_never_returns(tmp_path, capsys):
    folder = student_modules(
        tmp_path / "exercises", softmax="def softmax(x):\n    while True:\n        pass\n"
    )
    started = time.monotonic()
    nbgrader_cell.try_it("softmax", "softmax", np.ones((1, 3)), limit=1, submission=folder)
    assert time.monotonic() - started < allowed(1 + 10)
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
    assert (
        "Operation not permitted" in out
        or "softmax ended the process that ran it (signal 9)" in out
    ), out
    assert sleepers(("613",), since=started) == []


@round_trip
def test_autograde_shows_its_progress_leaves_out_the_expected_warnings_and_gathers_the_rest(course):
    log = course["log"]
    # not a terminal: a line a minute, and the last
    done = re.findall(r"^(\d+)/(\d+) graded \((\d+)%\)", log, re.M)
    assert done and done[-1][0] == done[-1][1] and int(done[-1][0]) >= len(course["expected"]), log[
        -3000:
    ]
    # nbgrader's checksum and SQLAlchemy's, expected
    assert "has changed! (should be" not in log and "not in session" not in log
    assert re.search(
        r"^Left out of the log: \d+ warnings that a graded cell's checksum changed", log, re.M
    )
    gathered = log.partition("For you to look at:\n")[2]
    assert "byte for byte the kit's reference solution" in gathered and "scores.py" in gathered


@round_trip
def test_grader_export_gives_every_student_one_row_with_points_per_exercise_from_the_gradebook(
    course, tmp_path
):
    out = tmp_path / "grades.csv"
    run = grader_cli(
        "export", str(course["root"] / "gradebook.db"), "--out", str(out), cwd=course["root"]
    )
    assert run.returncode == 0, run.stdout + run.stderr
    with out.open(newline="", encoding="utf-8") as f:
        rows = {row["student id"]: row for row in csv.DictReader(f)}
    assert set(rows) >= set(course["expected"])
    for student, scores in course["expected"].items():
        assert {name: float(rows[student][name]) for name in scores} == pytest.approx(scores)


def test_export_sets_nbgrader_s_late_penalty_to_the_kit_s_policy(tmp_path):
    course = tmp_path / "course"
    assert export(course, late_policy="10%/day,max 3 days") == 0
    config, _, _ = nbgrader_settings(course)
    from nbgrader.preprocessors import AssignLatePenalties

    from grader.course.nbgrader.late import KitLatePenalty

    penalties = AssignLatePenalties(config=config)
    penalties.init_plugin()
    plugin = penalties.plugin_inst
    assert type(plugin) is KitLatePenalty and plugin.policy == "10%/day,max 3 days"
    assert plugin.late_submission_penalty("ada", 92.0, 0.0) is None
    # two days begun: 20%, kept to a half point
    assert plugin.late_submission_penalty("ada", 92.0, 1.5 * 86400) == 92.0 - 73.5
    # past the most days: nothing kept
    assert plugin.late_submission_penalty("ada", 92.0, 4 * 86400) == 92.0


def test_export_refuses_a_late_policy_it_cannot_read(tmp_path, capsys):
    assert export(tmp_path / "course", late_policy="ten percent") == 2
    assert 'such as "10%/day"' in capsys.readouterr().err and not (tmp_path / "course").exists()
