"""Fixtures shared by the kit's tests, and the skipping of tests that need an OS this one is not."""

import os
import shutil
import signal
import sys

import pytest

from grader.paths import EXERCISES_DIR
from grader.sandbox.portable import simulate_other_os, simulating_other_os

ONLY = {"linux": "Linux", "posix": "POSIX"}  # marker: what a test so marked needs

pytest_plugins = ["pytester"]  # tests/test_workflow.py runs this file's hook on a small suite of its own


@pytest.fixture
def submission(tmp_path):
    """A fresh copy of the stubs, as a student has it after cloning."""
    folder = tmp_path / "exercises"
    shutil.copytree(EXERCISES_DIR, folder, ignore=shutil.ignore_patterns("__pycache__", ".grader"))
    return folder


def pytest_configure(config):
    """Under ATTENTION_BY_HAND_SIMULATE_OTHER_OS=1 (tests/test_portable.py), the APIs Windows lacks raise in this process too.

    A run started in the background by a shell inherits SIGINT ignored, and so would every grader the
    tests start: give it back, so the tests of Ctrl-C see what a terminal's Ctrl-C does.
    """
    if simulating_other_os():
        simulate_other_os()
    if hasattr(signal, "SIGINT") and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items):
    """Skip each test marked linux or posix on an OS without it, giving the marker's reason, which it must have."""
    here = {"linux": sys.platform == "linux", "posix": os.name == "posix"}
    for item in items:
        for name, needs in ONLY.items():
            marker = item.get_closest_marker(name)
            if marker is None:
                continue
            if len(marker.args) != 1 or not isinstance(marker.args[0], str):
                raise pytest.UsageError(f'{item.nodeid}: say what it needs {needs} for: @pytest.mark.{name}("what it uses")')
            if not here[name]:
                item.add_marker(pytest.mark.skip(reason=f"needs {needs}: {marker.args[0]}"))
