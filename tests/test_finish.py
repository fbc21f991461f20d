"""A grader process ends as sys.exit would end it (status, message, output, atexit), without the interpreter's teardown."""

import os
import subprocess
import sys

import pytest

END = "import atexit, sys; from grader.finish import finish; atexit.register(lambda: print('atexit ran', file=sys.stderr)); "


def ended(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", END + code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("given, status", [("None", 0), ("0", 0), ("1", 1), ("2", 2), ("130", 130)])
def test_the_status_is_the_one_given(given, status):
    run = ended(f"print('written', end=''); finish({given})")
    assert (run.returncode, run.stdout) == (status, "written")  # a line left in stdout's buffer is written
    assert run.stderr == "atexit ran\n"


def test_a_message_goes_to_stderr_with_status_1_as_sys_exit_says():
    run = ended("finish('Cannot check: no exercises folder here.')")
    assert run.returncode == 1
    assert run.stderr == "Cannot check: no exercises folder here.\natexit ran\n"


def test_a_thread_still_running_is_waited_for():
    run = ended("import threading, time; threading.Thread(target=lambda: (time.sleep(0.3), print('thread done'))).start(); finish(3)")
    assert (run.returncode, run.stdout) == (3, "thread done\n")


def test_an_output_pipe_closed_before_the_end_costs_no_traceback():
    code = f"{END}import time; print('still in the buffer'); time.sleep(0.5); finish(0)"  # `true` has gone by then
    buffered = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    run = subprocess.run(f'{sys.executable} -c "{code}" | true', shell=True, capture_output=True, text=True, timeout=60, env=buffered)
    assert run.returncode == 0
    assert run.stderr == "atexit ran\n"


def test_the_grader_command_keeps_its_usage_error_and_status():
    run = subprocess.run([sys.executable, "-m", "grader", "no-such-command"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "No such command 'no-such-command'" in run.stderr
