"""The check process `grader watch` keeps ready: started ahead of a save, it checks what it is told, on the files as they are then."""

import shutil
import time

import pytest

from grader.check.state import State, live_fingerprints
from grader.paths import SOLUTIONS_DIR
from grader.sandbox import launcher
from grader.sandbox.tree import RUN_VAR, marked
from grader.student.recheck import READY


def fresh(folder) -> dict:
    """The saved verdicts of the folder's files as they are."""
    return State.load(folder).fresh(live_fingerprints(folder))


def ready_job(folder) -> launcher.Child:
    return launcher.Child(
        launcher.module("grader.student.recheck", str(folder), READY), output="discard", feed=True
    )


@pytest.mark.slow
def test_a_ready_job_checks_the_files_as_saved_after_it_started(submission):
    with ready_job(submission) as job:
        # it gets ready (the checks' modules imported, the confinement chosen) on the stubs as they were
        time.sleep(1.0)
        shutil.copy(SOLUTIONS_DIR / "softmax.py", submission / "softmax.py")  # the save
        job.send("softmax")
        assert job.wait(120), job.output()
        assert job.returncode == 0, job.output()
        left = marked(f"{RUN_VAR}={job.token}", job.started)  # its workers ended with it
    assert fresh(submission)["softmax"].status == "passed"
    assert left == []


@pytest.mark.slow
def test_a_ready_job_told_nothing_ends_and_leaves_nothing(submission):
    with ready_job(submission) as job:
        job.send("")
        assert job.wait(60), job.output()
        assert job.returncode == 0
    assert fresh(submission) == {}
