"""Say what the isolation really was: user with and without Landlock told apart, grades refused where neighbours are not kept apart."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from grader.course import batch
from grader.sandbox import isolation


@pytest.mark.linux("the user tier is Linux's")
@pytest.mark.parametrize(("abi", "name"), [(0, "user"), (3, "user+landlock")])
def test_the_user_tier_is_recorded_with_or_without_landlock(monkeypatch, abi, name):
    monkeypatch.setattr(isolation, "landlock_abi", lambda: abi)
    assert isolation.OwnUser().name == name


@pytest.mark.parametrize(("tier", "refused"), [("namespaces", False), ("user+landlock", False), ("user", True), ("none", True)])
def test_batch_refuses_grades_on_a_tier_that_keeps_no_neighbours_apart_unless_allowed(monkeypatch, tier, refused):
    monkeypatch.setattr(isolation, "choose", lambda name=None: SimpleNamespace(name=tier))
    monkeypatch.setattr(isolation, "why_not", lambda name: "not here")
    assert bool(batch.isolation_problem(False)) == refused
    assert batch.isolation_problem(True) == ""


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
