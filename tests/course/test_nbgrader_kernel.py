"""The kit's autograde steps one by one, without a course: the kernel that cannot lose the grades, the modules, tidying, collecting."""

import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from busy import allowed
from survivors import sleepers
from traitlets.config import Config

from grader.course.nbgrader import execute
from grader.course.nbgrader.autograde import Unreadable, grade, outputs, read_modules
from grader.course.nbgrader.execute import RunNotebook, tidy
from grader.course.nbgrader.kernel import KERNEL_MEMORY, bwrap_problem
from grader.course.stubs import write_stubs
from grader.paths import EXERCISES_DIR, MODULES

pytestmark = [
    pytest.mark.linux(
        "nbgrader's kernels are confined with Linux namespaces; the checks read /proc and run sleep"
    ),
    pytest.mark.slow,
]

KILL = """\
import os, subprocess
subprocess.Popen(["sleep", "691"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    os.environ.clear()  # not even the kernel's marker: only its session, user or namespace tells
    subprocess.Popen(["sleep", "693"])
    os._exit(0)
os.kill(os.getpid(), 9)
"""
ATTACKS = {
    "kill": KILL,
    "hang": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n",
    "builtins": "import builtins\nbuiltins.__import__ = None  # the kernel cannot answer any more\n",
}
TIMEOUT = 3


def confined():
    """The mark of a case confined by bubblewrap: skipped where bubblewrap cannot run here."""
    return pytest.mark.skipif(
        bool(bwrap_problem()), reason=f"bubblewrap cannot confine a kernel here: {bwrap_problem()}"
    )


def cases():
    """Each attack in a kernel confined by bubblewrap (where it runs here), and the kill and the hang unconfined."""
    return [pytest.param("bwrap", attack, marks=confined()) for attack in ATTACKS] + [
        ("none", "kill"),
        ("none", "hang"),
    ]


def run_cells(tmp_path: Path, monkeypatch, confinement: str, cells: list[str]):
    """Run these cells with RunNotebook, between a cell that prints 'before' and one that prints 'after'; the cells as run."""
    if (
        confinement == "none"
    ):  # unconfined, an orphan that left the kernel's session is found as nbgrader's command line finds it
        monkeypatch.setattr(execute, "command_line", lambda: True)
    for name in (
        "HOME",
        "JUPYTER_RUNTIME_DIR",
        "JUPYTER_DATA_DIR",
        "IPYTHONDIR",
    ):  # nothing written outside tmp_path
        (tmp_path / "home" / name.lower()).mkdir(parents=True)
        monkeypatch.setenv(name, str(tmp_path / "home" / name.lower()))
    folder = tmp_path / "submission"
    write_stubs(folder / "exercises")
    cells = ["print('before')", *cells, "print('after')"]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in cells]
    )
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    config = Config()
    config.ConfinedKernelManager.confinement = confinement
    config.RunNotebook.timeout = TIMEOUT
    return (
        RunNotebook(config=config)
        .preprocess(notebook, {"metadata": {"path": str(folder)}})[0]
        .cells
    )


def texts(cells) -> list[str]:
    """What each cell printed."""
    return ["".join(output.get("text", "") for output in cell.outputs) for cell in cells]


@pytest.mark.parametrize("confinement, attack", cases())
def test_a_cell_that_kills_or_hangs_the_kernel_ends_the_run_there_and_leaves_nothing(
    tmp_path, monkeypatch, confinement, attack
):
    started, clock = time.time(), time.monotonic()
    said = texts(run_cells(tmp_path, monkeypatch, confinement, [ATTACKS[attack]]))
    seconds = time.monotonic() - clock
    folder = tmp_path / "submission"
    assert said[0] == "before\n" and said[2] == "", said
    assert (
        "the kernel died" if attack == "kill" else f"did not finish within {TIMEOUT} s"
    ) in said[1], said
    assert seconds < allowed(TIMEOUT + 20), seconds
    assert sleepers(("691", "693"), since=started) == []
    assert os.stat(folder).st_uid == os.getuid(), "the folder is given back to its owner"


@pytest.mark.parametrize("confinement", [pytest.param("bwrap", marks=confined()), "none"])
def test_a_cell_that_allocates_gigabytes_fails_there_and_the_run_goes_on(
    tmp_path, monkeypatch, confinement
):
    hoard = f"import numpy as np\nhoard = np.ones({KERNEL_MEMORY + (1 << 30)}, dtype=np.uint8)"
    cells = run_cells(tmp_path, monkeypatch, confinement, [hoard])
    assert [output.get("ename") for output in cells[1].outputs] == ["MemoryError"], cells[1].outputs
    assert texts(cells)[2] == "after\n", texts(cells)


FLOODS = {
    "prints": "while True:\n    print('x' * 100_000)",
    "displays": "from IPython.display import HTML, display\nwhile True:\n    display(HTML('<b>x</b>' * 10_000))",
}


@pytest.mark.parametrize("confinement", [pytest.param("bwrap", marks=confined()), "none"])
@pytest.mark.parametrize("flood", sorted(FLOODS))
def test_a_cell_that_floods_its_output_is_stopped_at_the_bound_as_it_runs(
    tmp_path, monkeypatch, confinement, flood
):
    """The attack: nbgrader kept every output two cells printed for 50 s (1.8 GiB); the limit ran after the cell."""
    clock = time.monotonic()
    cells = run_cells(tmp_path, monkeypatch, confinement, [FLOODS[flood]])
    said, kept = texts(cells), sum(len(str(output)) for output in cells[1].outputs)
    # messages past MESSAGE_BYTES (an unconfined kernel's prints flush 40 MB at once) are dropped unread: then the cell's time ends it
    stopped = (
        "sent more than 4 MiB of output, so the kernel was ended"
        if flood == "displays"
        else "Autograde stopped the notebook here"
    )
    assert stopped in said[1] and said[2] == "", said[1][-300:]
    assert kept < execute.CELL_OUTPUT + (1 << 20) and time.monotonic() - clock < allowed(
        TIMEOUT + 20
    )


ORPHAN = """
import subprocess, time, psutil
from grader.course.nbgrader import execute
execute.become_subreaper()
execute.command_line = lambda: True
subprocess.run(["sh", "-c", "sleep 0.2 & exit 0"])  # the sleep, orphaned, is adopted and ends
time.sleep(1.5)
zombies = lambda: [c.pid for c in psutil.Process().children() if c.status() == psutil.STATUS_ZOMBIE]
before = zombies()
execute.sweep(time.time())
print(len(before), len(zombies()))
"""


def test_the_orphans_autograde_adopts_are_reaped_not_left_as_zombies():
    """nbgrader's command line adopts orphans (a worker's inner bubblewrap, per student): a class's worth would fill the process table."""
    done = subprocess.run(
        [sys.executable, "-c", ORPHAN], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["1", "0"], done.stdout + done.stderr


def modules(folder: Path) -> Path:
    write_stubs(folder / "exercises")
    return folder


def test_the_modules_are_read_as_regular_files_only(tmp_path):
    submission = modules(tmp_path / "ok")
    assert set(read_modules(submission)) == set(MODULES)
    (submission / "exercises" / "softmax.py").unlink()
    (submission / "exercises" / "softmax.py").symlink_to(EXERCISES_DIR / "softmax.py")
    with pytest.raises(Unreadable, match="softmax.py is missing, or is a link"):
        read_modules(submission)
    (submission / "exercises" / "softmax.py").unlink()
    os.mkfifo(submission / "exercises" / "softmax.py")
    with pytest.raises(Unreadable, match="softmax.py is not a regular file"):
        read_modules(submission)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "exercises").symlink_to(modules(tmp_path / "elsewhere") / "exercises")
    with pytest.raises(Unreadable, match="no folder exercises/"):
        read_modules(linked)


def test_unreadable_modules_give_every_graded_cell_zero_and_say_why():
    grading = grade(Unreadable("there is no folder exercises/ in the submission"))
    assert set(grading["points"].values()) == {0.0}
    assert "Not graded: there is no folder exercises/" in grading["texts"]["softmax"]
    assert [o["output_type"] for o in outputs("text", 12.5)] == ["stream", "execute_result"]
    assert outputs("text", 12.5)[1]["data"] == {"text/plain": "12.5"}


def test_a_lone_surrogate_a_students_code_raises_is_shown_escaped_in_the_graded_cell(tmp_path):
    """autograde grades in nbgrader's own process, and the notebook it writes is UTF-8: a lone surrogate must not end the grading."""
    files = read_modules(modules(tmp_path / "submission"))
    files["softmax"] = b'def softmax(x):\n    raise ValueError("bad \\ud800 row")\n'
    grading = grade(files)
    text = grading["texts"]["softmax"]
    assert (
        "\\ud800" in text
        and "fault in the grader" not in text
        and grading["points"]["softmax"] == 0.0
    )
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("", outputs=outputs(text, 0.0))]
    )
    nbformat.writes(notebook).encode("utf-8")  # as nbgrader writes the autograded notebook


def test_tidy_leaves_no_litter_and_no_link(tmp_path):
    folder = modules(tmp_path / "autograded")
    for litter in (".hypothesis/constants", "exercises/__pycache__"):
        (folder / litter).mkdir(parents=True)
        (folder / litter / "x").write_text("x")
    (folder / "key").symlink_to("/etc/hostname")
    (folder / "dir").symlink_to(tmp_path)
    os.mkfifo(folder / "fifo")
    tidy(folder)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == sorted(
        ["exercises"] + [f"exercises/{name}.py" for name in ("__init__",) + MODULES]
    )
