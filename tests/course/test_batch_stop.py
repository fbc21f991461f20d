"""Ctrl-C during `grader batch`, on a real terminal: the running checks end at once, the finished rows stay."""

import csv
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from busy import allowed
from commands import batch_command
from survivors import living
from terminal import Terminal

from grader.paths import KIT_ROOT

pytestmark = pytest.mark.posix("a pseudo-terminal (the pty module)")
HANGS = Path(__file__).resolve().parents[1] / "hostile" / "infinite_loop" / "softmax.py"


def folders_left(root: Path) -> list:
    """Processes still running whose command line names a folder under root (a `grader check` of the batch)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if any(str(root) in part for part in process.info["cmdline"] or ()):
                found.append(process)
        except psutil.Error:
            pass
    return found


@pytest.mark.slow
def test_one_ctrl_c_ends_the_running_checks_keeps_the_finished_rows_and_the_rerun_grades_the_rest(
    tmp_path, pristine
):
    root = tmp_path / "submissions"
    names = ["a_stub", "b_hangs", "c_hangs", "d_hangs", "e_stub"]
    for name in names:
        shutil.copytree(pristine, root / name)
        if "hangs" in name:
            shutil.copy(HANGS, root / name / "softmax.py")
    csv_file = tmp_path / "grades.csv"
    argv = batch_command([root / n for n in names], csv_file)
    terminal = Terminal(argv, cwd=KIT_ROOT)
    terminal.wait_for("1/5 graded", timeout=120)  # the bar, redrawn in place
    time.sleep(1.0)  # the two checks now running are well inside the hanging softmax
    pressed = time.monotonic()
    terminal.type("\x03")
    seen = terminal.wait_for("4 left;", timeout=30)  # the bar says "about 0:20 left" too
    code = terminal.close(timeout=30)
    took = time.monotonic() - pressed
    with csv_file.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert code == 130, seen
    assert [Path(r["folder"]).name for r in rows] == ["a_stub"] and rows[0]["status"] == "graded"
    assert "1 of 5 graded this run, 4 left" in seen and "2/5 graded" not in seen
    assert took < 10, f"the batch took {took:.1f} s to stop"
    assert folders_left(root) == []
    rerun = Terminal([*argv, "--timeout", "4"], cwd=KIT_ROOT)
    said = rerun.wait_for("4/4 graded", timeout=120)
    assert rerun.close(timeout=30) == 0 and "4 to grade, 1 already in" in said
    with csv_file.open(newline="") as f:
        rerows = {Path(r["folder"]).name: r for r in csv.DictReader(f)}
    # the row finished before Ctrl-C, kept as it was
    assert sorted(rerows) == names and rerows["a_stub"] == rows[0]
    assert [rerows[n]["status"] for n in names if "hangs" in n] == ["timeout"] * 3


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP"])
def test_a_batch_killed_or_whose_terminal_closes_stops_as_ctrl_c_stops_it(tmp_path, pristine, stop):
    """A kill (a pod being stopped) or a closed terminal ends the running checks and leaves no process or temporary
    folder behind (both were left before: the signal ended batch alone)."""
    root, scratch = tmp_path / "submissions", tmp_path / "tmp"
    for name in ("b_hangs", "c_hangs"):
        shutil.copytree(pristine, root / name)
        shutil.copy(HANGS, root / name / "softmax.py")
    scratch.mkdir(mode=0o711)
    batch = subprocess.Popen(
        batch_command(root.iterdir(), tmp_path / "grades.csv"),
        cwd=KIT_ROOT,
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    started = psutil.Process(batch.pid)
    deadline = time.monotonic() + allowed(60)
    # two grading processes, each with its three workers, inside the hanging softmax
    while len(descendants := started.children(recursive=True)) < 8:
        assert time.monotonic() < deadline and batch.poll() is None, descendants
        time.sleep(0.1)
    time.sleep(1.0)
    batch.send_signal(getattr(signal, stop))
    said = batch.communicate(timeout=allowed(30))[0]
    assert batch.returncode == 128 + getattr(signal, stop), said
    assert "0 of 2 graded this run, 2 left" in said
    assert living(descendants) == [] and list(scratch.iterdir()) == []
