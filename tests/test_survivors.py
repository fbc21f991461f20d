"""The tests' finding of survivors: what a command left running is found, whatever it became, and nothing of another program."""

import subprocess
import sys

import psutil
import pytest
from survivors import Adopted

from grader.sandbox.tree import end_processes

# Leaves a daemon (double fork, a session of its own, no environment, another command line and, as root, a user of the
# workers' range) and prints its pid: what an attack that escaped would leave.
LEAVES_A_DAEMON = """
import os
if os.fork() == 0:
    os.setsid()
    pid = os.fork()
    if pid == 0:
        if os.geteuid() == 0:
            os.setuid((1 << 30) + 4242)
        for fd in (0, 1, 2):
            os.dup2(os.open(os.devnull, os.O_RDWR), fd)
        os.execve("/bin/sleep", ["innocent", "30"], {})
    print(pid, flush=True)
    os._exit(0)
os.wait()
"""

pytestmark = pytest.mark.linux("adopting orphans (PR_SET_CHILD_SUBREAPER) is Linux's")


def test_a_daemon_the_command_left_is_found_and_ended_and_another_programs_is_not(tmp_path):
    other = int(
        subprocess.run(
            [sys.executable, "-c", LEAVES_A_DAEMON], capture_output=True, text=True, timeout=60
        ).stdout
    )
    try:
        with Adopted([sys.executable, "-c", LEAVES_A_DAEMON], tmp_path, timeout=60) as run:
            own = int(run.stdout)
            found = run.survivors(wait=0.2)
            assert run.returncode == 0 and [line.split()[0] for line in found] == [str(own)], found
            assert "innocent 30" in found[0] and psutil.Process(other).is_running()
        assert not alive(own)  # ended when the test closed it
    finally:
        end_processes([psutil.Process(pid) for pid in (other,) if alive(pid)])


def test_a_command_that_leaves_nothing_has_no_survivors_and_its_status_and_output_are_kept(
    tmp_path,
):
    code = "import subprocess, sys; subprocess.run(['true']); print('said'); sys.stderr.write('warned'); sys.exit(3)"
    with Adopted([sys.executable, "-c", code], tmp_path, timeout=60) as run:
        assert (run.returncode, run.stdout, run.stderr, run.survivors(wait=0)) == (
            3,
            "said\n",
            "warned",
            [],
        )


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_if_the_adopter_is_killed_the_survivors_cannot_be_told_and_the_test_fails(tmp_path):
    with Adopted([sys.executable, "-c", "pass"], tmp_path, timeout=60) as run:
        run.adopter.kill()
        run.adopter.wait()
        with pytest.raises(AssertionError, match="adopting the command's orphans was ended"):
            run.survivors()
