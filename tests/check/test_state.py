"""The state folder: verdicts reused while the files stay the same, and only then."""

import json
from pathlib import Path

import pytest

import grader
from grader.check import cache as state
from grader.check.results import CheckResult, ExerciseResult, Report
from grader.course.stubs import write_stubs


def verdict(name, status="passed", note=""):
    """A one-check verdict for an exercise."""
    points = 10.0 if status == "passed" else 0.0
    return ExerciseResult(name, status, points, 10.0, [CheckResult(f"{name}.c", status, "")], note=note)


@pytest.fixture
def submission(tmp_path):
    """A fresh copy of the stubs."""
    return write_stubs(tmp_path / "work")


@pytest.fixture
def runs(monkeypatch):
    """A stand-in for the checks that records which exercises it was asked to run."""
    asked = []

    def run_checks(submission, exercises=None, **options):
        asked.append(list(exercises))
        return Report([verdict(name, "failed") for name in exercises], seed=7)

    monkeypatch.setattr("grader.check.runner.run_checks", run_checks)
    return asked


def test_nothing_cached_at_first(submission):
    assert state.cached_report(submission) is None


def test_saved_verdict_is_reused_until_its_file_changes(submission):
    state.save_report(submission, Report([verdict("scores")], seed=3))
    cached = state.cached_report(submission, ["scores"])
    assert [(e.name, e.status) for e in cached.exercises] == [("scores", "passed")]
    assert cached.seed == 3
    (submission / "training.py").write_text("# started\n")
    assert state.cached_report(submission, ["scores"]) is not None
    (submission / "scores.py").write_text("# started\n")
    assert state.cached_report(submission, ["scores"]) is None


def test_a_change_to_an_earlier_exercise_rechecks_what_builds_on_it(submission):
    state.save_report(submission, Report([verdict("heads"), verdict("masking")], seed=0))
    (submission / "softmax.py").write_text("# started\n")
    assert state.cached_report(submission, ["heads"]) is None
    assert state.cached_report(submission, ["masking"]) is not None


def test_a_new_relative_import_joins_the_fingerprint(submission):
    state.save_report(submission, Report([verdict("scores")], seed=0))
    (submission / "scores.py").write_text("from .softmax import softmax\n")
    assert state.depends_on(state.read_modules(submission), "scores") == ["scores", "softmax"]
    state.save_report(submission, Report([verdict("scores")], seed=0))
    (submission / "softmax.py").write_text("raise SystemExit\n")
    assert state.cached_report(submission, ["scores"]) is None


def test_verdicts_of_the_same_files_are_merged(submission):
    state.save_report(submission, Report([verdict("softmax")], seed=0))
    state.save_report(submission, Report([verdict("scores", "failed")], seed=0))
    assert state.cached_report(submission) is None
    both = state.cached_report(submission, ["softmax", "scores"])
    assert [(e.name, e.status) for e in both.exercises] == [("scores", "failed"), ("softmax", "passed")]


def test_root_cause_note_survives(submission):
    state.save_report(submission, Report([verdict("heads", "failed", note="heads fails because softmax does")], 0))
    assert state.cached_report(submission, ["heads"]).exercises[0].note == "heads fails because softmax does"


def test_root_causes_are_named_across_runs(submission, runs):
    state.save_report(submission, Report([verdict("softmax", "failed")], seed=0))
    heads = state.checked_report(submission, ["heads"]).exercises[0]
    assert runs == [["heads"]]
    assert "softmax" in heads.note and "scores" not in heads.note


def test_checked_report_runs_only_what_is_missing(submission, runs):
    state.save_report(submission, Report([verdict("scores")], seed=0))
    report = state.checked_report(submission)
    assert runs == [["masking", "softmax", "heads", "training"]]
    assert [e.status for e in report.exercises] == ["passed"] + ["failed"] * 4
    assert report.points == 10.0 and report.max_points == 50.0
    state.checked_report(submission)
    assert len(runs) == 1


def test_a_save_during_the_checks_is_not_hidden(submission, monkeypatch):
    def run_checks(folder, exercises=None, **options):
        (folder / "scores.py").write_text("# saved while the checks ran\n")
        return Report([verdict(name) for name in exercises], seed=0)

    monkeypatch.setattr("grader.check.runner.run_checks", run_checks)
    state.checked_report(submission)
    assert state.cached_report(submission, ["scores"]) is None
    assert state.cached_report(submission, ["masking", "softmax"]) is not None


def test_a_new_grader_version_forgets_old_verdicts(submission, monkeypatch):
    state.save_report(submission, Report([verdict("scores")], seed=0))
    monkeypatch.setattr(grader, "__version__", "99.0")
    assert state.cached_report(submission, ["scores"]) is None


def test_the_grader_hash_is_read_again_once_a_grader_file_changes(tmp_path, monkeypatch):
    """The hash is kept between calls (a watch asks it often), and a file edited since, or added, gives a new one."""
    own = tmp_path / "grader"
    own.mkdir()
    (own / "a.py").write_text("A = 1\n")
    monkeypatch.setattr(state, "GRADER_DIR", own)
    monkeypatch.setattr(state, "_grader_files", lambda: sorted(own.glob("*.py")))
    first, reads, read_bytes = state._grader_hash(), [], Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda path: reads.append(path) or read_bytes(path))
    assert state._grader_hash() == first
    assert reads == []  # nothing changed: nothing read
    (own / "a.py").write_text("A = 22\n")
    edited = state._grader_hash()
    (own / "b.py").write_text("")
    assert len({first, edited, state._grader_hash()}) == 3


def test_a_damaged_state_file_is_ignored(submission):
    (submission / ".grader").mkdir()
    (submission / ".grader" / "verdicts.json").write_text("{not json")
    assert state.cached_report(submission) is None
    state.save_report(submission, Report([verdict("scores")], seed=0))
    assert state.cached_report(submission, ["scores"]) is not None


def test_an_unwritable_state_folder_costs_only_the_memory(submission):
    (submission / ".grader").write_text("a file where the folder should be")
    state.save_report(submission, Report([verdict("scores")], seed=0))
    assert state.cached_report(submission, ["scores"]) is None
    assert state.write_json(submission, "hints.json", {}) is False


def test_writes_leave_no_temporary_files(submission):
    for _ in range(3):
        state.save_report(submission, Report([verdict("scores")], seed=0))
    assert sorted(p.name for p in (submission / ".grader").iterdir()) == ["verdicts.json"]


def test_a_damaged_verdict_is_checked_again(submission, runs):
    state.save_report(submission, Report([verdict("scores"), verdict("masking")], seed=0))
    path = submission / ".grader" / "verdicts.json"
    data = json.loads(path.read_text())
    del data["exercises"]["scores"]["verdict"]["checks"]
    data["exercises"]["masking"]["verdict"]["status"] = "great"
    path.write_text(json.dumps(data))
    assert state.last_known(submission) == {}
    report = state.checked_report(submission, ["scores", "masking"])
    assert runs == [["scores", "masking"]]
    assert [e.status for e in report.exercises] == ["failed", "failed"]
