"""The habits that keep the house clean, run with the tests so that they cannot be forgotten: ruff, and mypy's and
ruff's function findings against baselines that may only go down."""

from pathlib import Path

import pytest
from habits import (
    BASELINE,
    FUNCTIONS_BASELINE,
    baseline,
    compared,
    function_findings,
    mypy_errors,
    run,
)


def test_ruff_finds_nothing():
    done = run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, (
        f"ruff check found problems (`ruff check --fix .` mends many):\n{done.stdout[-3000:]}"
    )


def test_ruff_format_leaves_every_file_as_it_is():
    done = run("ruff", "format", "--check", "--no-cache", ".")
    assert done.returncode == 0, f"run `ruff format .`:\n{done.stdout[-3000:]}"


@pytest.mark.slow
def test_mypy_finds_no_more_errors_than_the_baseline(tmp_path):
    found, output = mypy_errors(tmp_path / "mypy")
    accepted = baseline()
    worse, better = compared(found, accepted)
    assert not worse, (
        f"new mypy errors (file: now, accepted {accepted}):\n{worse}\n{output[-4000:]}"
    )
    assert better <= 0, (
        f"mypy finds {better} fewer errors than {BASELINE.name}: lower the baseline with `python tests/habits.py`"
    )


def test_no_file_has_more_complex_or_long_functions_than_the_baseline():
    found, listing = function_findings(".")
    worse, better = compared(found, baseline(FUNCTIONS_BASELINE))
    assert not worse, (
        f"functions too complex, too long or taking too many arguments (file: now), beyond {FUNCTIONS_BASELINE.name}: "
        f"split them, or pass an object\n{worse}\n"
        + "\n".join(line for line in listing.splitlines() if line.split(":")[0] in worse)
    )
    assert better <= 0, (
        f"{better} fewer findings than {FUNCTIONS_BASELINE.name}: lower the baseline with `python tests/habits.py`"
    )


def test_the_function_rules_take_their_limits_from_pyproject(tmp_path):
    """A function of complexity 9 with six arguments is flagged twice (mccabe's own limit, 10, would pass it); a short one not."""
    branches = "".join(f"    if a == {i}:\n        return {i}\n" for i in range(8))
    (tmp_path / "tangled.py").write_text(
        f"def tangled(a, b, c, d, e, f):\n{branches}    return b\n\n\ndef plain(a):\n    return a\n"
    )
    found, listing = function_findings(str(tmp_path))
    assert {Path(file).name: n for file, n in found.items()} == {"tangled.py": 2}, listing
    assert (
        "C901 `tangled` is too complex (9 > 8)" in listing
        and "PLR0913" in listing
        and "plain" not in listing
    )


def test_a_baseline_refuses_a_file_with_more_findings_and_asks_to_be_lowered_when_there_are_fewer():
    accepted = {"a.py": 2, "b.py": 1}
    assert compared({"a.py": 2, "b.py": 1}, accepted) == ({}, 0)
    # a rise in one file is not paid for by another
    assert compared({"a.py": 1, "b.py": 2}, accepted) == ({"b.py": 2}, 0)
    assert compared({"a.py": 1, "c.py": 1}, accepted) == ({"c.py": 1}, 1)
    assert compared({"a.py": 1}, accepted) == ({}, 2)
