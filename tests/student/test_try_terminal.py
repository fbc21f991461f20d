"""`grader try` on a real terminal: a breakpoint() in the student's own function opens pdb there; another folder is confined."""

import shutil
import sys

import pytest
from terminal import Terminal

from grader.paths import SOLUTIONS_DIR

pytestmark = pytest.mark.posix("a pseudo-terminal (the pty module)")

STOPPING_SOFTMAX = """import numpy as np


def softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    print("top is", top.ravel())
    breakpoint()
    e = np.exp(x - top)
    return e / np.sum(e, axis=-1, keepdims=True)
"""


def work(tmp_path, name: str):
    """A copy of the reference with the stopping softmax, as the folder `name` under tmp_path."""
    folder = tmp_path / name
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "softmax.py").write_text(STOPPING_SOFTMAX, encoding="utf-8")
    return folder


@pytest.mark.slow
def test_breakpoint_opens_pdb_on_the_terminal_and_the_result_follows(tmp_path):
    """pdb stops in softmax, answers a question about x, continues, and try shows the result beside the expected one."""
    work(tmp_path, "exercises")  # the student's own exercises/, beside where they run the grader
    terminal = Terminal([sys.executable, "-m", "grader", "try", "softmax"], cwd=tmp_path)
    try:
        terminal.wait_for("(Pdb)")
        assert "top is" in terminal.seen  # print() shows on the terminal before the stop
        terminal.type("p x.shape\n")
        terminal.wait_for("(3, 40)")  # the shape of the example shown above
        terminal.type("c\n")
        shown = terminal.wait_for("they agree")
    finally:
        code = terminal.close()
    assert code == 0, shown
    assert "BdbQuit" not in shown and "yours:" in shown and "expected:" in shown


@pytest.mark.slow
def test_another_folder_is_tried_confined_never_on_the_terminal(tmp_path):
    """A submission that is not the student's own exercises/ runs in the sandbox: its breakpoint() cannot take the terminal."""
    folder = work(tmp_path, "submission")
    terminal = Terminal(
        [sys.executable, "-m", "grader", "try", "softmax", "--submission", str(folder)],
        cwd=tmp_path,
    )
    try:
        # no key typed: pdb never had the terminal
        shown = terminal.wait_for("did not return", timeout=120)
        # the breakpoint() named, with where it stops
        shown = terminal.wait_for("run your code without a terminal")
    finally:
        code = terminal.close()
    assert code == 1 and "top is" in shown, shown
