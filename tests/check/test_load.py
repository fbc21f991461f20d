"""The same verdicts on a busy machine: every known mistake and correct variant graded beside CPU hogs, as on an idle one."""

import os
import subprocess
import sys
import time

import pytest
from mutant_verdicts import RIGHT, WRONG, graded

HOG = "while True:\n    pass\n"


def outcome(verdict: dict) -> tuple:
    """What must not change with the load: the exercise's status and points, and each check's status."""
    return verdict["status"], verdict["points"], [(c["id"], c["status"]) for c in verdict["checks"]]


@pytest.mark.slow
def test_verdicts_are_the_same_while_two_processes_keep_every_core_busy(verdicts, tmp_path):
    hogs = [
        subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(max(2, os.cpu_count() or 2))
    ]
    try:
        time.sleep(0.5)
        busy = graded(tmp_path)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    differ = {
        name: (outcome(verdicts[name]), outcome(busy[name]))
        for name in verdicts
        if outcome(verdicts[name]) != outcome(busy[name])
    }
    assert differ == {}
    assert len(busy) == len(verdicts) == len(WRONG) + len(RIGHT) >= 38
