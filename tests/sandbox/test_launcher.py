"""The sandbox's launcher: one door for a child Python, ended with all it started; the isolation probe on files of its own."""

import sys
import time

import psutil
import pytest
from busy import allowed

from grader.sandbox import isolation, launcher
from grader.sandbox.tree import end_processes


@pytest.mark.slow
def test_a_child_past_its_deadline_is_ended_with_what_it_started(tmp_path):
    grandchild = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); print('started', flush=True); time.sleep(300)"
    started = time.monotonic()
    status, output = launcher.run(launcher.python("-c", grandchild), 3)
    assert status is None and "started" in output and time.monotonic() - started < allowed(15)
    left = [p for p in psutil.process_iter(["cmdline"]) if "time.sleep(300)" in " ".join(p.info["cmdline"] or ())]
    assert left == []


def test_the_output_kept_is_its_tail_and_says_how_much_was_cut():
    status, output = launcher.run(launcher.python("-c", "print('x' * 5000 + 'END')"), 30)
    with launcher.Child(launcher.python("-c", "print('y' * 5000 + 'END')")) as child:
        assert child.wait(30)
        tail = child.output(100)
    assert status == 0 and output.strip().endswith("END")
    assert tail.startswith("... (") and "bytes of output not shown" in tail and tail.strip().endswith("END") and len(tail) < 200


def test_the_probe_starts_its_worker_on_files_of_its_own(monkeypatch, tmp_path):
    given = []
    real = isolation.Worker

    def remember(confinement, folder):
        given.append(sorted(p.name for p in folder.iterdir()))
        return real(confinement, folder)

    monkeypatch.setattr(isolation, "Worker", remember)
    monkeypatch.setattr("grader.paths.EXERCISES_DIR", tmp_path / "missing")  # the kit's exercises/ gone: no matter
    assert isolation.probe(isolation.Portable()) == ""
    assert given == [["heads.py", "masking.py", "scores.py", "softmax.py", "training.py"]]


def test_every_child_python_has_the_same_flags():
    assert launcher.python("-c", "pass")[:4] == [sys.executable, "-I", "-X", "utf8"]
    assert launcher.module("grader", "check")[-3:] == ["-m", "grader", "check"]


@pytest.mark.posix("a zombie: a process that has ended and that its parent has not reaped")
def test_ending_a_process_its_parent_does_not_reap_waits_for_its_end_not_its_reaping():
    """An orphan's zombie waits for the system's init, which may take a second to reap it; it runs nothing meanwhile."""
    program = "import os, time\nif (pid := os.fork()) == 0:\n    time.sleep(60)\nprint(pid, flush=True)\ntime.sleep(60)"
    with launcher.Child(launcher.python("-c", program), output="events") as parent:
        child = psutil.Process(int(parent.process.stdout.readline()))
        started = time.monotonic()
        end_processes([child], seconds=5.0)
        assert child.status() == psutil.STATUS_ZOMBIE and time.monotonic() - started < 4.0
