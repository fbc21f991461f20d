"""Submission folders for the sandbox tests: the reference with some modules replaced."""

import shutil
import textwrap

from grader.paths import SOLUTIONS_DIR


def submission(tmp_path, **modules):
    """A copy of the reference solutions with some modules' source replaced."""
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    return folder
