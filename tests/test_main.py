"""`python -m grader` is the `grader` command: its usage errors and exit statuses as Click gives them."""

import subprocess
import sys


def test_the_grader_command_keeps_its_usage_error_and_status():
    run = subprocess.run(
        [sys.executable, "-m", "grader", "no-such-command"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "No such command 'no-such-command'" in run.stderr
