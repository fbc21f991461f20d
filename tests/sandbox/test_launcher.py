"""The sandbox's launcher: one door for a child Python, ended with all it started; the isolation probe's worker."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    left = [
        p
        for p in psutil.process_iter(["cmdline"])
        if "time.sleep(300)" in " ".join(p.info["cmdline"] or ())
    ]
    assert left == []


def test_the_output_kept_is_its_tail_and_says_how_much_was_cut():
    status, output = launcher.run(launcher.python("-c", "print('x' * 5000 + 'END')"), 30)
    with launcher.Child(launcher.python("-c", "print('y' * 5000 + 'END')")) as child:
        assert child.wait(30)
        tail = child.output(100)
    assert status == 0 and output.strip().endswith("END")
    assert (
        tail.startswith("... (")
        and "bytes of output not shown" in tail
        and tail.strip().endswith("END")
        and len(tail) < 200
    )


def test_the_probe_starts_a_worker_with_no_files_and_stops_it(monkeypatch, tmp_path):
    """The probe's worker answers before it has any file, and is gone with its room once it has."""
    started = []
    real = isolation.WorkerProcess

    def remember(confinement, folder):
        started.append(worker := real(confinement, folder))
        return worker

    monkeypatch.setattr(isolation, "WorkerProcess", remember)
    # the kit's exercises/ gone: no matter
    monkeypatch.setattr("grader.paths.EXERCISES_DIR", tmp_path / "missing")
    assert isolation.probe(isolation.Portable()) == ""
    (worker,) = started
    assert worker.process.poll() is not None and not worker.launch.room.root.exists()


def test_a_probe_whose_worker_cannot_start_leaves_no_room_behind(monkeypatch, tmp_path):
    """The user tier's probe, where its user cannot reach this Python, once left a worker's room in /tmp on every run."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def refused(*args, **options):
        raise PermissionError(13, "Permission denied", args[0][0])

    monkeypatch.setattr(launcher, "piped", refused)
    assert "Permission denied" in isolation.probe(isolation.Portable())
    assert list(tmp_path.iterdir()) == []


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


def press_ctrl_c() -> None:
    """Ctrl-C, as the terminal sends it, and the moment in which Python runs the signal's handler."""
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.1)


@pytest.mark.posix("sends itself SIGINT, as Ctrl-C does")
def test_ctrl_c_while_a_child_is_ended_takes_effect_once_it_is_ended_whole(monkeypatch):
    """A watch stopped while it ended a check's process once left that process's temporary folder behind."""
    real = launcher.end_tree
    monkeypatch.setattr(launcher, "end_tree", lambda process: (press_ctrl_c(), real(process)))
    child = launcher.Child(launcher.python("-c", "import time; time.sleep(60)"), scratch=True)
    with pytest.raises(KeyboardInterrupt):
        child.end()
    assert child.returncode is not None and not child.scratch.exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.posix("sends itself SIGINT, as Ctrl-C does")
def test_ctrl_c_while_a_child_starts_ends_it_before_it_takes_effect(monkeypatch):
    """The caller never gets a child whose start Ctrl-C cut: so it is ended, folder and all, before KeyboardInterrupt."""
    started = []

    def popen(*args, **options):
        press_ctrl_c()
        started.append((real(*args, **options), Path(options["env"]["TMPDIR"])))
        return started[-1][0]

    real = subprocess.Popen
    monkeypatch.setattr(launcher.subprocess, "Popen", popen)
    with pytest.raises(KeyboardInterrupt):
        launcher.Child(launcher.python("-c", "import time; time.sleep(60)"), scratch=True)
    ((process, scratch),) = started
    assert process.poll() is not None and not scratch.exists()
