"""Say what the isolation really was: user with and without Landlock told apart, grades refused where neighbours are not kept apart."""

import os
import re
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.course import batch
from grader.course.stubs import write_stubs
from grader.sandbox import isolation


@pytest.mark.linux("the user tier is Linux's")
@pytest.mark.parametrize(("abi", "name"), [(0, "user"), (3, "user+landlock")])
def test_the_user_tier_is_recorded_with_or_without_landlock(monkeypatch, abi, name):
    monkeypatch.setattr(isolation, "landlock_abi", lambda: abi)
    assert isolation.OwnUser().name == name


@pytest.mark.parametrize(
    ("tier", "refused"),
    [
        ("namespaces", False),
        ("user+landlock", False),
        ("landlock", False),
        ("user", True),
        ("none", True),
    ],
)
def test_batch_refuses_grades_on_a_tier_that_keeps_no_neighbours_apart_unless_allowed(
    monkeypatch, tier, refused
):
    monkeypatch.setattr(isolation, "choose", lambda name=None: SimpleNamespace(name=tier))
    monkeypatch.setattr(isolation, "why_not", lambda name: "not here")
    assert bool(batch.isolation_problem(False)) == refused
    assert batch.isolation_problem(True) == ""


@pytest.mark.slow
def test_a_tier_that_cannot_be_had_is_a_clear_message_not_a_traceback(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "grader", "check", "softmax", "--solutions"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, isolation.TIER_VAR: "bogus"},
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.startswith("Cannot check:") and isolation.TIER_VAR in run.stderr


@pytest.fixture
def weak_tier(monkeypatch):
    """A machine whose strongest tier is user without Landlock: no bubblewrap, the grader root, a kernel without Landlock."""
    monkeypatch.delenv(isolation.TIER_VAR, raising=False)
    monkeypatch.setattr(
        isolation,
        "_probe",
        lambda tier: "bubblewrap (bwrap) is not installed" if tier == "namespaces" else "",
    )
    monkeypatch.setattr(isolation, "landlock_abi", lambda: 0)
    monkeypatch.setattr(isolation.linux, "free_uid", lambda: 1 << 30)


@pytest.mark.linux("the user tier is Linux's")
def test_grader_batch_refuses_the_user_tier_without_landlock_unless_allowed(
    tmp_path, weak_tier, monkeypatch
):
    assert isolation.choose().name == "user"
    folder, csv_file = write_stubs(tmp_path / "alice"), tmp_path / "grades.csv"
    refused = CliRunner().invoke(main, ["batch", str(folder), "--csv", str(csv_file)])
    assert refused.exit_code == 2 and not csv_file.exists(), refused.output
    assert (
        "without Landlock" in refused.output
        and "/proc" in refused.output
        and "--allow-unisolated" in refused.output
    )
    assert "Traceback" not in refused.output
    assert batch.isolation_problem(True) == ""


def test_a_forced_none_tier_is_refused_saying_it_was_asked_for(monkeypatch):
    monkeypatch.setenv(isolation.TIER_VAR, "none")
    said = batch.isolation_problem(False)
    # each tier's reason named, none left empty
    assert re.search(r"\(namespaces: [^;]+; user: [^;]+; landlock: [^;)]+\)", said), said
    assert (
        isolation.not_apart("namespaces")
        == isolation.not_apart("user+landlock")
        == isolation.not_apart("landlock")
        == ""
    )


@pytest.mark.nbgrader  # imports the autograde preprocessors, which need nbformat
@pytest.mark.parametrize(
    ("recorded", "refused"),
    [
        ("user", True),
        ("none", True),
        ("user+landlock", False),
        ("landlock", False),
        ("namespaces", False),
    ],
)
def test_nbgrader_autograde_refuses_grades_recorded_on_a_tier_that_keeps_no_neighbours_apart(
    monkeypatch, recorded, refused
):
    from grader.course.nbgrader import autograde

    grading = {"isolation": recorded, "points": {}, "texts": {}, "copied": []}
    monkeypatch.setattr(autograde, "collected", lambda parent, assignment: {})
    monkeypatch.setattr(autograde, "grade", lambda files: grading)
    monkeypatch.setattr(autograde.linux, "protect_grader", lambda: None)
    resources = {"nbgrader": {"assignment": "attention-by-hand", "student": "alice"}}
    step = autograde.GradeModules()
    if refused:
        with pytest.raises(RuntimeError, match="allow_unisolated"):
            step.preprocess(None, dict(resources))
    else:
        assert step.preprocess(None, dict(resources))[1][autograde.KEY] is grading
    step.allow_unisolated = True
    assert step.preprocess(None, dict(resources))[1][autograde.KEY] is grading


def test_a_probe_runs_once_however_many_threads_ask(monkeypatch):
    """choose_soon() probes in a thread; a run that asks meanwhile waits for that probe instead of starting its own."""
    probes, started = [], threading.Event()

    def slow_probe(tier):
        probes.append(tier)
        started.set()
        time.sleep(0.1)
        return "" if tier == "none" else "not here"

    monkeypatch.setattr(isolation, "_probe_now", slow_probe)
    monkeypatch.setattr(isolation, "_probed", {})
    monkeypatch.delenv(isolation.TIER_VAR, raising=False)
    isolation.choose_soon()
    assert started.wait(10)
    chosen = [isolation.choose() for _ in range(3)]
    assert probes == list(isolation.TIERS) and {c.name for c in chosen} == {"none"}


def test_the_workers_site_folders_hold_numpy():
    """The worker sees Python's site folders read-only: numpy's among them."""
    from pathlib import Path

    import numpy

    assert str(Path(numpy.__file__).resolve().parent.parent) in isolation.site_dirs()
