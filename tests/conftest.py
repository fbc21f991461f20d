"""Fixtures shared by the kit's tests."""

import shutil

import pytest

from grader.paths import EXERCISES_DIR


@pytest.fixture
def submission(tmp_path):
    """A fresh copy of the stubs, as a student has it after cloning."""
    folder = tmp_path / "exercises"
    shutil.copytree(EXERCISES_DIR, folder, ignore=shutil.ignore_patterns("__pycache__", ".grader"))
    return folder
