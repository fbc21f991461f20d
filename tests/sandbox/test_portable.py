"""The portable path, on Linux: the hostile and mistaken submissions again, with Linux's mechanisms taken away.

The second run sets ATTENTION_BY_HAND_SIMULATE_OTHER_OS=1: no namespaces, no user of the worker's
own, no POSIX limits in the worker, no death signal, and os.fork, os.killpg, os.setsid,
os.pidfd_open, select and resource raising in the grader's process. Those test files assert each
case's verdict and time bound and that nothing survives, so their passing is the same verdicts.
"""

import os
import re
import subprocess
import sys
import time

import pytest

from grader.paths import KIT_ROOT
from grader.sandbox.portable import SIMULATE_VAR, simulating_other_os

pytestmark = pytest.mark.slow  # the hostile, mutant and sandbox suites run again

SUITES = [
    "tests/sandbox/test_hostile.py",
    "tests/check/test_checks.py",
    "tests/sandbox/test_sandbox.py",
]


@pytest.mark.linux(
    "the point is to take Linux's mechanisms away on Linux; elsewhere the normal run is the portable one"
)
@pytest.mark.skipif(simulating_other_os(), reason="this is already the simulated run")
def test_the_hostile_and_mistaken_submissions_get_the_same_verdicts_without_linux():
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITES],
        cwd=KIT_ROOT,
        env={**os.environ, SIMULATE_VAR: "1"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    tally = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:]
    print(f"portable run: {tally} ({time.monotonic() - start:.0f} s)")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", tally) and "failed" not in tally and "error" not in tally
