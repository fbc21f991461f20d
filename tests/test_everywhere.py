"""What every laptop needs: no warning from the kit, Ctrl-C that stops cleanly, UTF-8 whatever the locale."""

import os
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest

from grader.paths import KIT_ROOT, SOLUTIONS_DIR

HANG = "def softmax(x):\n    while True:\n        pass\n"


def grader(*args, **kwargs):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, encoding="utf-8", timeout=300, **kwargs)


@pytest.mark.slow
def test_the_reference_passes_with_every_warning_an_error_and_dev_mode(tmp_path):
    run = grader("-W", "error", "-X", "dev", "-m", "grader", "check", "--solutions", cwd=tmp_path)
    assert run.returncode == 0 and run.stderr == "", run.stderr[-2000:]
    assert "100.0 / 100.0" in run.stdout and not list(tmp_path.iterdir())  # nothing left where it ran


@pytest.mark.slow
@pytest.mark.posix("sends SIGINT, as Ctrl-C does in a terminal")
def test_ctrl_c_stops_a_check_saves_nothing_and_leaves_nothing_running(tmp_path):
    folder = tmp_path / "work"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "softmax.py").write_text(HANG, encoding="utf-8")
    check = subprocess.Popen(
        [sys.executable, "-m", "grader", "check", "--submission", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    time.sleep(4)  # into the hanging softmax
    below = psutil.Process(check.pid).children(recursive=True)  # its workers, and bubblewrap around them
    assert below, "the check should have started its workers by now"
    check.send_signal(signal.SIGINT)
    out, err = check.communicate(timeout=60)
    assert check.returncode == 130 and "Stopped (Ctrl-C)" in err, out[-500:] + err[-500:]
    assert "Traceback" not in out + err and not (folder / ".grader").exists()
    gone, alive = psutil.wait_procs(below, timeout=5)
    assert alive == []


@pytest.mark.slow
def test_non_ascii_folders_and_output_under_an_ascii_locale(tmp_path):
    folder = tmp_path / "Übung — José"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "scores.py").write_text('def attention_scores(q, k):\n    print("√d ≠ d — ça va")\n    return q\n', encoding="utf-8")
    env = {**os.environ, "LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "", "NO_COLOR": "1"}
    run = grader("-m", "grader", "check", "scores", "--submission", str(folder), cwd=KIT_ROOT, env=env)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr, run.stderr[-2000:]
    assert "scores" in run.stdout and "failed" in run.stdout
