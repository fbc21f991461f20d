"""The grader runs the check files itself, without pytest: the checks pytest would find, in its order, with its verdicts."""

import os
import shutil
import subprocess
import sys
import threading

import pytest

from grader.check import collector
from grader.check.runner import run_checks
from grader.exercises import NAMES
from grader.paths import CHECKS_DIR, SOLUTIONS_DIR
from grader.sandbox.handle import StudentCode


def pytest_on_the_checks(*args: str) -> list[str]:
    """The lines of `pytest -q ARGS` run on the check files directly, as a developer would (checks/conftest.py)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        *args,
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "-c",
        os.devnull,
    ]
    command += ["--rootdir", str(CHECKS_DIR), f"--confcutdir={CHECKS_DIR}"]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=CHECKS_DIR, timeout=300
    ).stdout.splitlines()


@pytest.mark.slow
def test_each_check_file_gives_the_checks_pytest_collects_in_its_order():
    files = [
        CHECKS_DIR / kind / f"test_{name}.py" for name in NAMES for kind in ("public", "hidden")
    ]
    collected = [
        line for line in pytest_on_the_checks("--collect-only", *map(str, files)) if "::" in line
    ]
    found = []
    for path in files:
        module = collector._imported(path.parent.name, path.stem.removeprefix("test_"))
        found += [
            f"{path.parent.name}/{path.name}::{check.__name__}"
            for check in collector._checks(module)
        ]
    assert found == collected and len(found) > 30


@pytest.mark.slow
def test_a_wrong_softmax_fails_the_checks_it_fails_under_pytest(tmp_path):
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    wrong = (
        (SOLUTIONS_DIR / "softmax.py")
        .read_text(encoding="utf-8")
        .replace("np.exp(", "np.exp(2 * ", 1)
    )
    (folder / "softmax.py").write_text(wrong, encoding="utf-8")
    files = [str(CHECKS_DIR / kind / "test_softmax.py") for kind in ("public", "hidden")]
    said = pytest_on_the_checks(*files, f"--submission={folder}", "-rf")
    under_pytest = sorted(
        line.split("::")[1].split(" ")[0].removeprefix("test_")
        for line in said
        if line.startswith("FAILED")
    )
    (result,) = run_checks(folder, ["softmax"]).exercises
    here = sorted(
        check.id.removeprefix("softmax.") for check in result.checks if check.status != "passed"
    )
    assert here == under_pytest and 0 < len(here) < len(result.checks)


@pytest.mark.slow
def test_every_worker_of_a_run_starts_ahead_of_the_checks_never_in_the_middle_of_one(monkeypatch):
    started = []
    start = StudentCode._start

    def recorded(handle):
        started.append((sorted(handle.reference), threading.current_thread().name))
        return start(handle)

    monkeypatch.setattr(StudentCode, "_start", recorded)
    # in the full kit, some checks of training have the reference serve two of its own
    report = run_checks(SOLUTIONS_DIR, ["training"])
    assert report.passed
    # a worker for each set of functions the reference serves
    assert len({tuple(reference) for reference, _ in started}) == 2
    # none started while a check waited
    assert {thread for _, thread in started} == {"worker-start"}, started
