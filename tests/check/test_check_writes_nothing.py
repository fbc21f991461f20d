"""`grader check --submission X` on a folder that is not the student's own exercises/ reads it and writes nothing there."""

import shutil

import pytest
from click.testing import CliRunner

from grader.cli import main


@pytest.mark.slow
def test_checking_another_folder_leaves_it_as_it_was(tmp_path, pristine):
    folder = tmp_path / "submission"
    shutil.copytree(pristine, folder)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    result = CliRunner().invoke(
        main, ["check", "softmax", "--submission", str(folder), "--json", str(tmp_path / "r.json")]
    )
    assert result.exit_code == 1 and (tmp_path / "r.json").exists(), result.output
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
