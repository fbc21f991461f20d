"""`grader try` on a real terminal: a breakpoint() in the student's function opens pdb there, and the run goes on after it."""

import os
import select
import shutil
import subprocess
import sys
import time

import pytest

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


class Terminal:
    """A command on a pseudo-terminal of its own: what it wrote so far, and keys typed into it."""

    def __init__(self, argv, cwd):
        import pty

        self.main, secondary = pty.openpty()
        env = {**os.environ, "TERM": "dumb", "PYTHONBREAKPOINT": "", "NO_COLOR": "1"}
        self.process = subprocess.Popen(argv, stdin=secondary, stdout=secondary, stderr=secondary, cwd=cwd, env=env, close_fds=True)
        os.close(secondary)
        self.seen = ""

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """Read until text appears; all that was read."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never came; the terminal shows:\n{self.seen}"
            if select.select([self.main], [], [], min(left, 1.0))[0]:
                try:
                    self.seen += os.read(self.main, 4096).decode("utf-8", "replace")
                except OSError:  # the other end closed: the command is done
                    assert text in self.seen, f"{text!r} never came; the terminal shows:\n{self.seen}"
        return self.seen

    def type(self, keys: str):
        os.write(self.main, keys.encode())

    def close(self) -> int:
        code = self.process.wait(timeout=60)
        os.close(self.main)
        return code


def test_breakpoint_opens_pdb_on_the_terminal_and_the_result_follows(tmp_path):
    """pdb stops in softmax, answers a question about x, continues, and try shows the result beside the expected one."""
    folder = tmp_path / "work"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "softmax.py").write_text(STOPPING_SOFTMAX, encoding="utf-8")
    terminal = Terminal([sys.executable, "-m", "grader", "try", "softmax", "--submission", str(folder)], cwd=tmp_path)
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
