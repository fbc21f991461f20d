"""The habits that keep the house clean, run with the tests so that they cannot be forgotten: ruff and mypy."""

import pytest
from habits import BASELINE, baseline, mypy_errors, run


def test_ruff_finds_nothing():
    done = run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, f"ruff check found problems (`ruff check --fix .` mends many):\n{done.stdout[-3000:]}"


def test_ruff_format_leaves_every_file_as_it_is():
    done = run("ruff", "format", "--check", "--no-cache", ".")
    assert done.returncode == 0, f"run `ruff format .`:\n{done.stdout[-3000:]}"


@pytest.mark.slow
def test_mypy_finds_no_more_errors_than_the_baseline(tmp_path):
    found, output = mypy_errors(tmp_path / "mypy")
    accepted = baseline()
    worse = {file: n for file, n in found.items() if n > accepted.get(file, 0)}
    assert not worse, f"new mypy errors (file: now, accepted {accepted}):\n{worse}\n{output[-4000:]}"
    better = sum(accepted.values()) - sum(found.values())
    assert better <= 0, f"mypy finds {better} fewer errors than {BASELINE.name}: lower the baseline with `python tests/habits.py`"
