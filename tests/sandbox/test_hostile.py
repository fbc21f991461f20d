"""Hostile submissions: each gets its stated verdict within its time bound, and leaves nothing running."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from busy import allowed
from survivors import record, sleepers, survivors

from grader.check.runner import run_checks
from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox import isolation
from grader.sandbox.errors import StudentError
from grader.sandbox.handle import StudentCode
from grader.sandbox.worker.codec import Foreign

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"
X = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -np.inf]])
RIGHT = np.array([[0.09003057, 0.24472847, 0.66524096], [0.62245933, 0.37754067, 0.0]])
LIMIT = 2.0  # seconds per call in these tests
# heads and training use softmax, graded with the reference
OTHERS = ("scores", "masking", "heads", "training")


def submission(tmp_path, case) -> Path:
    """A copy of the reference solutions with the case's files laid over it."""
    folder = tmp_path / case
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in (HOSTILE / case).iterdir():
        shutil.copy(path, folder / path.name.removesuffix(".hostile"))
    return folder


@pytest.fixture
def workers(monkeypatch):
    """Every worker started during the test."""
    return record(monkeypatch)


@pytest.fixture(params=["strongest", pytest.param("landlock", marks=pytest.mark.slow)])
def tier(request, monkeypatch):
    """The strongest tier here, then the landlock tier (the one of a pod), where this machine has it."""
    if request.param == "landlock":
        if why := isolation.landlock_missing():
            pytest.skip(f"the landlock tier cannot be had here: {why}")
        monkeypatch.setenv(isolation.TIER_VAR, "landlock")
    return request.param


# where the worker is the grader's own user, starting a process or reading /proc is refused: the call raises
IN_LANDLOCK = {
    "child_holds_pipes": ("raised", "PermissionError"),
    "forges_reply": ("raised", "PermissionError"),
}


def assert_nothing_survives(folder, started):
    """No worker and no process it started: by its token, its user or its PID namespace."""
    assert started and survivors(started) == []


def is_right(value) -> bool:
    return type(value) is np.ndarray and np.allclose(value, RIGHT, rtol=1e-6)


def zeros(value) -> bool:
    return type(value) is np.ndarray and np.array_equal(value, np.zeros_like(X))


def foreign(type_name):
    return lambda value: type(value) is Foreign and value.type_name == type_name


# case: (the StudentError kind and a phrase of its message, or a test of the returned value; seconds allowed)
VERDICTS = {
    "infinite_loop": (("timeout", "softmax did not return within 2 s"), 10),
    "swallows_everything": (
        ("timeout", "on the clock, the wall-clock limit"),
        10,
    ),  # it sleeps: the wall-clock limit
    "hang_at_import": (("import", "importing your softmax.py did not finish within 2 s"), 10),
    "slow_but_correct": (is_right, 10),
    "exit_at_import": (("import", "your softmax.py called sys.exit while being imported"), 8),
    "os_exit_at_import": (
        ("import", "your softmax.py ended the Python process while being imported (exit status 0"),
        8,
    ),
    "os_exit_in_call": (("crashed", "softmax ended the Python process (exit status 0"), 8),
    "keyboard_interrupt": (("raised", "softmax raised KeyboardInterrupt (softmax.py, line 5"), 8),
    "segfault": (("crashed", "softmax crashed the Python process (segmentation fault)"), 8),
    "infinite_recursion": (("raised", "softmax recursed without end (RecursionError)"), 8),
    "huge_allocation": (("raised", "softmax ran out of memory (softmax.py, line 7"), 8),
    "memory_growth": (
        ("raised|memory", "memory"),
        8,
    ),  # MemoryError under RLIMIT_AS; stopped by the memory watch where there is none
    "syntax_error": (
        ("import", "your softmax.py cannot be imported: expected ':' (softmax.py, line 4)"),
        8,
    ),
    "pytest_skip": (
        ("refused", "softmax.py imports pytest, which the grader does not allow"),
        8,
    ),  # tests/test_imports.py
    "pytest_xfail": (("refused", "softmax.py imports pytest, which the grader does not allow"), 8),
    "imports_solutions": (("refused", "softmax.py imports the reference solutions (line 3)"), 8),
    "imports_solutions_hidden": (("refused", "softmax imports the reference solutions"), 8),
    "patches_allclose": (zeros, 8),
    "patches_pytest": (
        ("refused", "softmax.py imports _pytest, which the grader does not allow"),
        8,
    ),
    "patches_builtins": (zeros, 8),
    "lying_conftest": (zeros, 8),
    "numpy_shadow": (zeros, 8),
    "fake_report": (zeros, 8),
    "eq_always_true": (foreign("softmax.Anything"), 8),
    "ndarray_subclass": (foreign("softmax.Agreeable"), 8),
    "array_function": (foreign("softmax.Claims"), 8),
    "object_dtype": (foreign("numpy.ndarray with dtype object"), 8),
    "recursive_value": (foreign("list"), 8),
    "nan_output": (lambda value: type(value) is np.ndarray and np.isnan(value).all(), 8),
    "unseeded_noise": (
        lambda value: (
            type(value) is np.ndarray
            and not is_right(value)
            and np.allclose(value, RIGHT, atol=0.1)
        ),
        8,
    ),
    "mutates_input": (is_right, 8),
    "child_holds_pipes": (is_right, 8),
    "prints_64mb": (is_right, 15),
    "closes_output": (is_right, 8),
    "chatty_thread": (is_right, 8),
    "forges_reply": (("bad_output|crashed", ""), 8),
}


# Cases that take more than a second or two (they wait out a time limit, restart a crashed worker, or run slowly): slow
SLOW_CALLS = {
    "infinite_loop",
    "swallows_everything",
    "hang_at_import",
    "os_exit_in_call",
    "segfault",
    "slow_but_correct",
}
SLOW_CHECKED = {"slow_but_correct", "unseeded_noise", "nan_output", "os_exit_in_call"}


def cases(names, slow: set) -> list:
    """The cases in order, those in slow marked so."""
    return [
        pytest.param(name, marks=pytest.mark.slow) if name in slow else name
        for name in sorted(names)
    ]


def test_every_hostile_case_has_a_verdict():
    assert sorted([*VERDICTS, "kills_grader"]) == sorted(
        path.name for path in HOSTILE.iterdir() if path.is_dir()
    )


@pytest.mark.linux(
    "the hostile cases use /proc, fork and POSIX signals, and survivors are found by PID namespace"
)
@pytest.mark.parametrize("case", cases(VERDICTS, SLOW_CALLS))
def test_hostile_call_gets_its_verdict(case, tmp_path, workers, tier):
    expected, bound = VERDICTS[case]
    expected = IN_LANDLOCK.get(case, expected) if tier == "landlock" else expected
    folder = submission(tmp_path, case)
    start, start_time = time.monotonic(), time.time()
    with StudentCode(folder, timeout=LIMIT + (1 if case == "slow_but_correct" else 0)) as student:
        try:
            outcome = student.call("softmax", "softmax", X.copy())
        except StudentError as error:
            assert not callable(expected), f"{case} raised {error.kind}: {error.message}"
            kind, phrase = expected
            assert error.kind in kind.split("|") and phrase in error.message, (
                error.kind,
                error.message,
            )
        else:
            assert callable(expected), f"{case} returned {outcome.value!r}"
            assert expected(outcome.value), outcome.value
        # the next call is served, by a fresh worker if need be, with the same verdict (a hang: see test_sandbox)
        try:
            if not callable(expected) and expected[0][0] == "timeout":
                raise StudentError("timeout", "not repeated")
            again = student.call("softmax", "softmax", X.copy()).value
            assert callable(expected) and (expected(again) or case == "unseeded_noise")
        except StudentError as error:
            assert not callable(expected) and error.kind in expected[0].split("|")
        assert (
            student.call("scores", "attention_scores", X, X).value.shape == (2, 2)
            or case == "forges_reply"
        )
    assert time.monotonic() - start < allowed(bound)
    assert_nothing_survives(folder, workers)
    if case == "child_holds_pipes":
        # confined, none of its children survives; unconfined (macOS, Windows), the one that left its session
        # and its environment behind escapes the sweep: a known limit of isolation "none", said in docs/instructors.md
        escaped = ("300", "301") if isolation.choose().name != "none" else ("300",)
        assert sleepers(escaped, since=start_time) == []


def test_patches_stay_in_the_worker(tmp_path):
    for case in (
        "patches_allclose",
        "patches_builtins",
    ):  # patches_pytest cannot import pytest (tests/test_imports.py)
        with StudentCode(submission(tmp_path, case)) as student:
            student.call("softmax", "softmax", X.copy())
    assert not np.allclose(0.0, 1.0) and isinstance(1, int) and not isinstance(1, str)
    with pytest.raises(pytest.fail.Exception):
        pytest.fail("pytest.fail still fails")


def test_unseeded_noise_differs_between_calls(tmp_path):
    with StudentCode(submission(tmp_path, "unseeded_noise")) as student:
        first, second = (student.call("softmax", "softmax", X.copy()).value for _ in range(2))
    assert not np.array_equal(first, second)


def test_mutated_inputs_show_in_the_outcome(tmp_path):
    with StudentCode(submission(tmp_path, "mutates_input")) as student:
        outcome = student.call("softmax", "softmax", X.copy())
    assert np.array_equal(outcome.args[0], np.zeros_like(X))


def test_huge_output_is_capped_and_fake_lines_stay_output(tmp_path):
    with StudentCode(submission(tmp_path, "prints_64mb")) as student:
        output = student.call("softmax", "softmax", X.copy()).output
    assert len(output) < 20_000 and "more bytes of output not shown" in output
    with StudentCode(submission(tmp_path, "fake_report")) as student:
        outcome = student.call("softmax", "softmax", X.copy())
    assert "softmax PASSED" in outcome.output and zeros(outcome.value)


# Through the hidden checks: the exercise gets the verdict, the others keep theirs.

CHECKED = {
    "slow_but_correct": "passed",
    "prints_64mb": "passed",
    "patches_allclose": "failed",
    "patches_pytest": "error",
    "numpy_shadow": "failed",
    "pytest_skip": "error",
    "eq_always_true": "failed",
    "ndarray_subclass": "failed",
    "array_function": "failed",
    "object_dtype": "failed",
    "nan_output": "failed",
    "unseeded_noise": "failed",
    "fake_report": "failed",
    "os_exit_in_call": "error",
    "imports_solutions_hidden": "error",
    "exit_at_import": "error",
}


@pytest.mark.linux(
    "the hostile cases use /proc, fork and POSIX signals, and survivors are found by PID namespace"
)
@pytest.mark.parametrize("case", cases(CHECKED, SLOW_CHECKED))
def test_hidden_checks_give_the_verdict(case, tmp_path, workers, tier):
    folder = submission(tmp_path, case)
    start = time.monotonic()
    report = run_checks(folder, ["softmax"], profile="quick", timeout=LIMIT)
    assert time.monotonic() - start < allowed(30)
    (softmax,) = report.exercises
    assert softmax.status == CHECKED[case], [check.message for check in softmax.checks]
    assert (softmax.points == softmax.max_points) == report.passed == (CHECKED[case] == "passed")
    assert_nothing_survives(folder, workers)


@pytest.mark.slow
@pytest.mark.linux(
    "the hostile cases use /proc, fork and POSIX signals, and survivors are found by PID namespace"
)
def test_the_other_exercises_keep_their_true_verdict(tmp_path, workers):
    folder = submission(tmp_path, "patches_allclose")
    report = run_checks(folder, profile="quick", timeout=LIMIT)
    status = {result.name: result.status for result in report.exercises}
    assert status == {"softmax": "failed", **{name: "passed" for name in OTHERS}}
    assert_nothing_survives(folder, workers)


@pytest.mark.slow
def test_a_conftest_in_the_folder_is_never_loaded_by_the_checks(tmp_path):
    folder = submission(tmp_path, "lying_conftest")
    script = f"from grader.check.runner import run_checks; print(run_checks({str(folder)!r}, ['softmax']).exercises[0].status)"
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert run.stdout.split() == ["failed"], run.stderr


@pytest.mark.slow
def test_the_command_line_grades_a_folder_with_a_conftest_ignoring_it(tmp_path):
    folder = submission(tmp_path, "lying_conftest")
    result = tmp_path / "result.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "check",
            "softmax",
            "--submission",
            str(folder),
            "--json",
            str(result),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    assert json.loads(result.read_text(encoding="utf-8"))["exercises"][0]["status"] == "failed"


@pytest.mark.slow
def test_the_command_line_writes_the_graders_json_and_exit_status(tmp_path):
    folder = submission(tmp_path, "fake_report")
    result_file = tmp_path / "result.json"
    start = time.monotonic()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "check",
            "softmax",
            "--submission",
            str(folder),
            "--json",
            str(result_file),
        ],
        capture_output=True,
        text=True,
        cwd=KIT_ROOT,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert time.monotonic() - start < allowed(30)
    assert run.returncode == 1, run.stderr
    result = json.loads(result_file.read_text())
    assert result["total"]["points"] < 20 and result["exercises"][0]["status"] == "failed"
