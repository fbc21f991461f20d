"""`nbgrader autograde`'s whole process tree: under its memory ceiling, and nothing of it left once it is stopped.

Under a memory ceiling: an attacker's costly asks beside an honest student, the whole tree measured.

The checks run inside autograde's own process (a hub pod's or a container's memory limit is that
process tree's), so an ask that made the reference build gigabytes there would end autograde and
leave the students after the attacker ungraded. Real nbgrader, one course in a temporary folder:
the attacker (first in order) asks the stand-ins for huge answers in heads.py and training.py, the
honest student's five files are the reference; the tree's summed RSS is sampled with psutil.
"""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from busy import allowed
from course_env import environment, run
from survivors import living
from treememory import peak_tree

from grader.exercises import BY_NAME, NAMES
from grader.paths import MODULES, SOLUTIONS_DIR

try:
    from nbgrader.api import Gradebook
except ImportError:
    Gradebook = None

pytestmark = [
    pytest.mark.linux(
        "grading with nbgrader is done on Linux, where RLIMIT_AS holds the reference helper"
    ),
    pytest.mark.nbgrader,
    pytest.mark.slow,
]

ASSIGNMENT = "attention-by-hand"
ATTACKS = Path(__file__).resolve().parents[1] / "attacks"
CEILING = 512 << 20  # bytes autograde's whole process tree may hold while the attacker is graded
# the attacker's modules; the other three are right
COSTLY = {"heads": "costly_asks.py", "training": "costly_sgd_ask.py"}


def submit(course: Path, student: str, modules: dict[str, str]) -> None:
    """The released assignment with these modules, copied into submitted/ as an instructor does."""
    folder = course / "submitted" / student / ASSIGNMENT
    shutil.copytree(course / "release" / ASSIGNMENT, folder)
    for name, source in modules.items():
        (folder / "exercises" / f"{name}.py").write_text(source, encoding="utf-8")


def gradebook_scores(course: Path, student: str) -> dict[str, float]:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        return {grade.name.removeprefix("test_"): grade.score for grade in notebook.grades}


def make_course(root: Path, env: dict) -> Path:
    """A course made as the instructor guide says, its assignment released."""
    course = root / "course"
    course.mkdir()
    run(course, None, "grader", "nbgrader", ".")
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("\nc.RunNotebook.timeout = 10\n")
    run(course, env, "nbgrader", "generate_assignment", ASSIGNMENT)
    run(course, env, "nbgrader", "release_assignment", ASSIGNMENT)
    return course


def test_autograde_stays_under_its_ceiling_while_an_attacker_asks_and_grades_the_honest_student_fully(
    tmp_path,
):
    if Gradebook is None:
        pytest.fail("nbgrader is not installed: pip install -e '.[test,nbgrader]'")
    env = environment(tmp_path / "instructor")
    course = make_course(tmp_path, env)
    reference = {
        name: (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8") for name in MODULES
    }
    submit(
        course,
        "a_attacker",
        reference
        | {name: (ATTACKS / file).read_text(encoding="utf-8") for name, file in COSTLY.items()},
    )
    submit(course, "b_honest", reference)

    peaks: list = []
    process = subprocess.Popen(
        [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT],
        cwd=course,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    watcher = threading.Thread(target=peak_tree, args=(process, peaks))
    watcher.start()
    log = process.communicate(timeout=900)[0].decode(errors="replace")
    watcher.join()
    assert process.returncode == 0, log[-3000:]
    # nbgrader and the grader alone hold more than 64 MiB
    assert 64 << 20 < peaks[0] < CEILING, (peaks[0] >> 20, log[-3000:])
    assert "fault in the grader" not in log, log[-3000:]

    full = {name: BY_NAME[name].points for name in NAMES}
    assert gradebook_scores(course, "b_honest") == full
    assert gradebook_scores(course, "a_attacker") == full | dict.fromkeys(COSTLY, 0.0)


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_autograde_stopped_while_a_kernel_runs_leaves_nothing_of_its_own(tmp_path, stop):
    """A kill (a pod being stopped) or Ctrl-C while a notebook's kernel runs: nothing of autograde's is left running,
    no temporary folder (the kernel's room), and the submission's folder is the instructor's again (a kill left the
    room, and as root the folder owned by the kernel's user, before)."""
    if Gradebook is None:
        pytest.fail("nbgrader is not installed: pip install -e '.[test,nbgrader]'")
    env = environment(tmp_path / "instructor")
    course = make_course(tmp_path, env)
    submit(course, "a_waits", {})
    waits = course / "submitted" / "a_waits" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(waits, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(8)"))
    nbformat.write(notebook, waits)
    scratch = tmp_path / "tmp"
    scratch.mkdir(mode=0o711)
    # else IPython makes its folder in the temporary one
    (tmp_path / "instructor").mkdir(exist_ok=True)
    autograde = subprocess.Popen(
        [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT],
        cwd=course,
        env=env | {"TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    said = ""
    for line in autograde.stdout:
        said += line
        if "Started the notebook's kernel" in line:
            break
    time.sleep(1.0)  # inside the sleeping cell
    started = psutil.Process(autograde.pid).children(recursive=True)
    autograde.send_signal(getattr(signal, stop))
    said += autograde.communicate(timeout=allowed(60))[0]
    assert "Started the notebook's kernel" in said and started, said[-3000:]
    assert living(started) == [], said[-3000:]
    assert list(scratch.iterdir()) == [], said[-3000:]
    graded = course / "autograded"
    assert {path.stat().st_uid for path in [graded, *graded.rglob("*")]} == {os.geteuid()}
