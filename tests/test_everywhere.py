"""What every laptop needs: no warning from the kit, Ctrl-C that stops cleanly, UTF-8 whatever the locale."""

import os
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest

from grader.exercises import BY_NAME
from grader.paths import KIT_ROOT, SOLUTIONS_DIR


def grader(*args, **kwargs):
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        **kwargs,
    )


@pytest.mark.slow
def test_the_reference_passes_with_every_warning_an_error_and_dev_mode(tmp_path):
    run = grader("-W", "error", "-X", "dev", "-m", "grader", "check", "--solutions", cwd=tmp_path)
    assert run.returncode == 0 and run.stderr == "", run.stderr[-2000:]
    # nothing left where it ran
    assert "100.0 / 100.0" in run.stdout and not list(tmp_path.iterdir())


def _line(process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _hot(processes) -> bool:
    """Whether any of these processes, or any below them, is a worker that has spent over a second of CPU: one in the hang."""
    for process in processes:
        try:
            for one in (process, *process.children(recursive=True)):
                if "boot.py" in _line(one) and one.cpu_times().user > 1.0:
                    return True
        except psutil.Error:
            pass
    return False


def hanging(module: str) -> str:
    """The reference's module with its first function replaced by one that never returns: imported fine, a hang per call."""
    source = (SOLUTIONS_DIR / f"{module}.py").read_text(encoding="utf-8")
    return (
        source
        + f"\n\ndef {BY_NAME[module].functions[0]}(*args, **kwargs):\n    while True:\n        pass\n"
    )


@pytest.mark.slow
@pytest.mark.posix("sends SIGINT, as Ctrl-C does in a terminal")
def test_ctrl_c_stops_a_check_saves_nothing_and_leaves_nothing_running(tmp_path):
    names, module = ["scores", "heads"], "scores"  # Ctrl-C while a worker is in scores' hang
    folder = tmp_path / "work"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / f"{module}.py").write_text(hanging(module), encoding="utf-8")
    check = subprocess.Popen(
        [sys.executable, "-m", "grader", "check", *names, "--submission", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        main, deadline = psutil.Process(check.pid), time.monotonic() + 120
        while not _hot(main.children()):
            assert time.monotonic() < deadline and check.poll() is None, (
                f"the check of a hanging {module} never got there"
            )
            time.sleep(0.05)
        below = main.children(recursive=True)  # its workers and bubblewrap around them
        check.send_signal(signal.SIGINT)
        out, err = check.communicate(timeout=60)
    finally:
        check.kill()  # a check that never got there ends here (killing one that has ended does nothing)
        check.communicate()
    assert check.returncode == 130 and "Stopped (Ctrl-C)" in err, out[-500:] + err[-500:]
    assert "Traceback" not in out + err and not (folder / ".grader").exists()
    gone, alive = psutil.wait_procs(below, timeout=5)
    for process in alive:  # not to leave them to the tests that follow
        process.kill()
    assert alive == []


@pytest.mark.slow
def test_non_ascii_folders_and_output_under_an_ascii_locale(tmp_path):
    folder = tmp_path / "Übung — José"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "scores.py").write_text(
        'def attention_scores(q, k):\n    print("√d ≠ d — ça va")\n    return q\n', encoding="utf-8"
    )
    env = {**os.environ, "LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "", "NO_COLOR": "1"}
    run = grader(
        "-m", "grader", "check", "scores", "--submission", str(folder), cwd=KIT_ROOT, env=env
    )
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr, run.stderr[-2000:]
    assert "scores" in run.stdout and "failed" in run.stdout
