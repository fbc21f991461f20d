"""Untouched stubs are "not started" by what their files are: no worker, the same verdicts and messages as running them."""

import subprocess
import sys

import pytest

from grader.check import untouched
from grader.check.runner import run_checks
from grader.check.untouched import untouched_stubs
from grader.paths import MODULES, SOLUTIONS_DIR
from grader.sandbox.handle import StudentCode


def read(folder) -> dict:
    return {f"{m}.py": (folder / f"{m}.py").read_bytes() for m in MODULES}


def said(report) -> list[tuple]:
    return [(c.id, c.status, c.message) for e in report.exercises for c in e.checks]


def test_a_stub_that_depends_on_stubs_only_is_untouched(submission):
    files = read(submission)
    assert untouched_stubs(files) == set(MODULES)
    files["masking.py"] += b"\n# a change\n"
    assert untouched_stubs(files) == {"scores", "softmax"}  # heads and training import masking
    # as a Windows checkout writes it
    files["softmax.py"] = files["softmax.py"].replace(b"\n", b"\r\n")
    assert "softmax" in untouched_stubs(files)


def test_untouched_stubs_start_no_worker_and_say_what_running_them_says(
    submission, tmp_path, monkeypatch
):
    def no_worker(self):
        raise AssertionError("a worker was started for untouched stubs")

    with monkeypatch.context() as patched:
        patched.setattr(StudentCode, "_start", no_worker)
        quick = run_checks(submission, ["scores", "softmax"])
    for module in (
        "scores",
        "softmax",
    ):  # a comment at the end: no longer the stub, so each check runs in the worker
        path = submission / f"{module}.py"
        path.write_text(path.read_text(encoding="utf-8") + "# started\n", encoding="utf-8")
    assert said(quick) == said(run_checks(submission, ["scores", "softmax"]))
    assert {e.status for e in quick.exercises} == {"not_started"}


@pytest.mark.parametrize("exercise", ["heads", "training"])
def test_a_stub_beside_written_modules_is_run(submission, exercise):
    (submission / "masking.py").write_bytes((SOLUTIONS_DIR / "masking.py").read_bytes())
    assert exercise not in untouched_stubs(read(submission))
    assert run_checks(submission, [exercise]).exercises[0].status == "not_started"


@pytest.mark.slow
def test_the_public_checks_of_stubs_end_as_recorded_without_pytest(submission):
    """A new student's first `grader`: the record stands for running the public checks, and pytest is never loaded."""
    program = (
        "import sys; from grader.check.runner import run_checks; "
        f"report = run_checks({str(submission)!r}, checks='public'); "
        "print(sorted({e.status for e in report.exercises}), [m for m in ('pytest', 'hypothesis') if m in sys.modules])"
    )
    run = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert run.stdout.strip() == "['not_started'] []", run.stderr[-2000:]
    assert said(run_checks(submission, checks="public")) == said(
        run_checks(submission, checks="public", record=False)
    )


def test_a_record_of_other_checks_is_not_used(submission, monkeypatch):
    """A record whose fingerprint is not these stubs' and checks' (a kit changed without `python -m grader.course.stubs`) is ignored."""
    monkeypatch.setattr(untouched, "record_digest", lambda: "other checks")
    untouched._record.cache_clear()
    try:
        assert untouched.recorded("softmax") is None
        assert (
            run_checks(submission, ["softmax"], checks="public").exercises[0].status
            == "not_started"
        )
    finally:
        untouched._record.cache_clear()


@pytest.mark.slow
def test_a_written_exercise_beside_recorded_stubs_is_run(submission):
    (submission / "scores.py").write_bytes((SOLUTIONS_DIR / "scores.py").read_bytes())
    report = run_checks(submission, ["scores", "softmax"], checks="public")
    assert [e.status for e in report.exercises] == ["passed", "not_started"]
    assert said(report) == said(
        run_checks(submission, ["scores", "softmax"], checks="public", record=False)
    )
