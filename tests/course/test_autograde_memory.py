"""`nbgrader autograde` under a memory ceiling: an attacker's costly asks beside an honest student, the whole tree measured.

The checks run inside autograde's own process (a hub pod's or a container's memory limit is that
process tree's), so an ask that made the reference build gigabytes there would end autograde and
leave the students after the attacker ungraded. Real nbgrader, one course in a temporary folder:
the attacker (first in order) asks the stand-ins for huge answers in heads.py and training.py, the
honest student's five files are the reference; the tree's summed RSS is sampled with psutil.
"""

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
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


def environment(home: Path) -> dict[str, str]:
    """nbgrader's environment: this venv's scripts first; home and Jupyter's folders inside the test's folder."""
    env = dict(
        os.environ,
        PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        HOME=str(home),
    )
    env.pop("PYTHONPATH", None)
    env.update(
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        JUPYTER_DATA_DIR=str(home / "data"),
        IPYTHONDIR=str(home / ".ipython"),
    )
    return env


def run(cwd: Path, env: dict | None, *args: str) -> str:
    """Run a command of the course, failing the test if it fails; its output."""
    done = subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


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


def test_autograde_stays_under_its_ceiling_while_an_attacker_asks_and_grades_the_honest_student_fully(
    tmp_path,
):
    if Gradebook is None:
        pytest.fail("nbgrader is not installed: pip install -e '.[test,nbgrader]'")
    course, env = tmp_path / "course", environment(tmp_path / "instructor")
    course.mkdir()
    run(course, None, "grader", "nbgrader", ".")
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("\nc.RunNotebook.timeout = 10\n")
    run(course, env, "nbgrader", "generate_assignment", ASSIGNMENT)
    run(course, env, "nbgrader", "release_assignment", ASSIGNMENT)
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
