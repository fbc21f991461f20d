"""Exercises checked beside the others in a second grader process: the same verdicts, and a fault of its own is the grader's."""

import copy
import os
import shutil

import pytest

from grader.check import beside, command, runner
from grader.check.runner import run_checks
from grader.course import batch
from grader.exercises import NAMES
from grader.paths import SOLUTIONS_DIR
from grader.sandbox import isolation, launcher


def said(report) -> list[tuple]:
    """Everything a report tells, check by check (the time each took aside)."""
    return [
        (e.name, e.status, e.points, c.id, c.status, c.message, c.by_grader, c.public, c.printed, c.example, c.calls)
        for e in report.exercises
        for c in e.checks
    ]


def test_the_costliest_exercises_go_to_different_sides_in_lesson_order(monkeypatch):
    monkeypatch.setattr(beside, "usable_cpus", lambda: 2)
    here, there = beside.split(list(NAMES))
    assert sorted(here + there) == sorted(NAMES) and here and there
    assert {"heads", "training"} - set(here) and {"heads", "training"} - set(there)
    assert here == [n for n in NAMES if n in here] and there == [n for n in NAMES if n in there]
    assert beside.split(["softmax"]) == (["softmax"], [])
    monkeypatch.setattr(beside, "usable_cpus", lambda: 1)
    assert beside.split(list(NAMES)) == (list(NAMES), [])


@pytest.mark.slow
def test_checked_beside_or_not_a_run_says_the_same(submission, monkeypatch):
    """A passing scores and heads, a wrong softmax: every status, message, point and failing input alike."""
    monkeypatch.setattr(beside, "usable_cpus", lambda: 2)
    shutil.copy(SOLUTIONS_DIR / "scores.py", submission / "scores.py")
    shutil.copy(SOLUTIONS_DIR / "heads.py", submission / "heads.py")
    wrong = (SOLUTIONS_DIR / "softmax.py").read_text(encoding="utf-8").replace("np.exp(", "np.exp(2 * ", 1)
    (submission / "softmax.py").write_text(wrong, encoding="utf-8")
    names = ["scores", "softmax", "heads"]
    started = []
    monkeypatch.setattr(beside, "start", lambda *args, start=beside.start: started.append(args[2]) or start(*args))
    together = run_checks(submission, names, parallel=True)
    assert started and started[0] and set(started[0]) < set(names)
    assert said(together) == said(run_checks(submission, names))
    assert [e.status for e in together.exercises] == ["passed", "failed", "passed"]


@pytest.mark.slow
def test_a_process_beside_that_fails_leaves_an_error_of_the_graders_and_the_rest_graded(submission, monkeypatch):
    monkeypatch.setattr(beside, "usable_cpus", lambda: 2)
    shutil.copy(SOLUTIONS_DIR / "scores.py", submission / "scores.py")
    shutil.copy(SOLUTIONS_DIR / "heads.py", submission / "heads.py")

    def failing(folder, root, names, stubs, options):
        return launcher.Child(launcher.python("-c", "import sys; sys.exit('MemoryError: it could not start')"), output="discard")

    monkeypatch.setattr(beside, "start", failing)
    report = run_checks(submission, ["scores", "heads"], parallel=True)
    by_name = {e.name: e for e in report.exercises}
    here, there = beside.split(["scores", "heads"])
    assert by_name[here[0]].status == "passed"
    lost = by_name[there[0]]
    assert lost.status == "error" and lost.points == 0 and lost.checks[0].by_grader
    assert "could not start" in lost.checks[0].message and "fault in the grader" in lost.checks[0].message


def test_a_run_cut_short_ends_the_process_beside(submission, monkeypatch):
    """Ctrl-C while the checks run here: the process beside is ended with the run, not left checking."""
    monkeypatch.setattr(beside, "usable_cpus", lambda: 2)
    for name in NAMES:
        shutil.copy(SOLUTIONS_DIR / f"{name}.py", submission / f"{name}.py")
    children = []
    monkeypatch.setattr(beside, "start", lambda *args, start=beside.start: children.append(start(*args)) or children[-1])

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_checked", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_checks(submission, parallel=True)
    assert children and children[0].returncode is not None


@pytest.mark.slow
def test_jobs_1_checks_in_one_process_and_batch_asks_for_it(tmp_path, monkeypatch):
    monkeypatch.setattr(beside, "usable_cpus", lambda: 2)
    monkeypatch.setattr(beside, "start", lambda *args: pytest.fail("a process beside was started"))
    assert command.check(("scores", "heads"), solutions=True, json_file=tmp_path / "report.json", jobs=1) == 0
    started = []

    class Child:
        def __init__(self, argv, **kwargs):
            started.append(argv)
            raise OSError("not started here")

    monkeypatch.setattr(batch.launcher, "Child", Child)
    with pytest.raises(OSError):
        batch.run_check(tmp_path, tmp_path / "result.json", 60.0)
    assert started[0][-2:] == ["--jobs", "1"]


@pytest.mark.linux("the user tier: a user of the worker's own, Linux's")
def test_the_process_beside_confines_in_the_tier_the_run_chose_whatever_the_report_calls_it(submission, monkeypatch):
    """The user tier is recorded as "user+landlock" where the kernel has Landlock; the process beside must choose "user"."""
    if os.geteuid() != 0 or isolation.why_not("user"):
        pytest.skip("the user tier needs the grader to run as root")
    monkeypatch.setattr(beside, "usable_cpus", lambda: 2)
    monkeypatch.setenv(isolation.TIER_VAR, "user")
    for name in ("scores", "heads"):
        shutil.copy(SOLUTIONS_DIR / f"{name}.py", submission / f"{name}.py")
    report = run_checks(submission, ["scores", "heads"], parallel=True)
    assert report.isolation.startswith("user") and [e.status for e in report.exercises] == ["passed", "passed"], said(report)


@pytest.mark.slow
def test_the_process_beside_is_told_the_tier_not_the_name_the_report_records(submission, monkeypatch):
    """The user tier's name is "user+landlock" where the kernel has Landlock: the process beside chooses by the tier."""

    chosen = copy.copy(isolation.choose())
    chosen.name = f"{chosen.tier}+recorded-differently"
    monkeypatch.setattr(beside, "usable_cpus", lambda: 2)
    monkeypatch.setattr(isolation, "choose", lambda name=None: chosen)
    for name in ("scores", "heads"):
        shutil.copy(SOLUTIONS_DIR / f"{name}.py", submission / f"{name}.py")
    report = run_checks(submission, ["scores", "heads"], parallel=True)
    assert [e.status for e in report.exercises] == ["passed", "passed"], said(report)
