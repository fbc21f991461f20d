"""The state folder: verdicts reused while the files stay the same, and only then; each verdict back as the run gave it."""

import json
from pathlib import Path

import pytest

import grader
from grader.check import runner, state
from grader.check.files import depends_on, hashes_for, read_modules
from grader.check.results import CheckResult, ExerciseResult, Report
from grader.check.state import State, checked_report, live_fingerprints
from grader.course.stubs import write_stubs
from grader.exercises import NAMES


def verdict(name, status="passed", note=""):
    """A one-check verdict for an exercise."""
    points = 10.0 if status == "passed" else 0.0
    return ExerciseResult(
        name, status, points, 10.0, [CheckResult(f"{name}.c", status, "")], note=note
    )


def of_files(submission, *results):
    """These verdicts, each given the folder's files as they are now, as a run gives a verdict its snapshot's."""
    files = read_modules(submission)
    for result in results:
        result.files = hashes_for(files, result.name)
    return list(results)


def save(submission, *results, seed=0):
    """Save these verdicts as a run would, of the folder's files as they are now."""
    State(submission).save(Report(of_files(submission, *results), seed=seed))


def cached(submission, names=NAMES):
    """The saved verdicts of these exercises if none of their files changed since, else None."""
    fresh = State.load(submission).fresh(live_fingerprints(submission))
    return [fresh[name] for name in names] if all(name in fresh for name in names) else None


@pytest.fixture
def submission(tmp_path):
    """A fresh copy of the stubs."""
    return write_stubs(tmp_path / "work")


@pytest.fixture
def runs(monkeypatch):
    """A stand-in for the checks, failing every exercise it runs, that records which exercises it was asked to run."""
    asked = []

    def checked(snapshot, exercises=None, saved=None, rerun=True, **options):
        todo = [name for name in exercises if rerun or name not in saved]
        asked.append(todo)
        ran = {name: verdict(name, "failed") for name in todo}
        for name, result in ran.items():  # as the run files them: under the snapshot's files
            result.files = hashes_for(snapshot.files, name)
        known = {**saved, **ran}
        runner.note_root_causes(list(known.values()))
        return Report([known[name] for name in exercises], seed=7)

    monkeypatch.setattr(runner, "check_snapshot", checked)
    return asked


def test_nothing_cached_at_first(submission):
    assert cached(submission) is None
    assert State.load(submission).last() == {}


def test_saved_verdict_is_reused_until_its_file_changes(submission):
    save(submission, verdict("scores"), seed=3)
    assert [(e.name, e.status) for e in cached(submission, ["scores"])] == [("scores", "passed")]
    assert State.load(submission).seed == 3
    (submission / "training.py").write_text("# started\n")
    assert cached(submission, ["scores"]) is not None
    (submission / "scores.py").write_text("# started\n")
    assert cached(submission, ["scores"]) is None
    # the last verdict is still known, as of other files
    assert "scores" in State.load(submission).last()


def test_a_change_to_an_earlier_exercise_rechecks_what_builds_on_it(submission):
    save(submission, verdict("heads"), verdict("masking"))
    (submission / "softmax.py").write_text("# started\n")
    assert cached(submission, ["heads"]) is None
    assert cached(submission, ["masking"]) is not None


def test_a_new_relative_import_joins_the_fingerprint(submission):
    save(submission, verdict("scores"))
    (submission / "scores.py").write_text("from .softmax import softmax\n")
    assert depends_on(read_modules(submission), "scores") == ["scores", "softmax"]
    save(submission, verdict("scores"))
    (submission / "softmax.py").write_text("raise SystemExit\n")
    assert cached(submission, ["scores"]) is None


def test_verdicts_of_the_same_files_are_merged(submission):
    save(submission, verdict("softmax"))
    save(submission, verdict("scores", "failed"))
    assert cached(submission) is None
    assert [(e.name, e.status) for e in cached(submission, ["scores", "softmax"])] == [
        ("scores", "failed"),
        ("softmax", "passed"),
    ]


def test_a_verdict_comes_back_as_the_run_gave_it(submission):
    """Its note, and beside the JSON what each check called and named, and a failed check's failing call with when and by whom."""
    failing = CheckResult(
        "heads.c",
        "failed",
        "out is off",
        calls=("attention_head",),
        blamed_function="attention_head",
    )
    failing.example = {"function": "attention_head", "args": "AAAA"}
    broken = CheckResult(
        "heads.d", "error", "your heads.py cannot be imported", failed_import="softmax"
    )
    result = ExerciseResult(
        "heads", "failed", 0.0, 10.0, [failing, broken], note="fix softmax first", cause="softmax"
    )
    State(submission).save(Report(of_files(submission, result), seed=0), by="watch")
    (back,) = cached(submission, ["heads"])
    assert (back.note, back.cause) == ("fix softmax first", "softmax")
    first, second = back.checks
    assert (first.calls, first.blamed_function, first.failed_import) == (
        ("attention_head",),
        "attention_head",
        "",
    )
    assert (second.calls, second.blamed_function, second.failed_import) == ((), "", "softmax")
    assert {key: first.example[key] for key in ("function", "args", "by")} == {
        "function": "attention_head",
        "args": "AAAA",
        "by": "watch",
    }
    assert second.example is None
    # saved again, as a later run keeps it: when and by whom stay
    State(submission).save(Report([back], seed=0), by="status")
    assert State.load(submission).failing["heads.c"]["by"] == "watch"


def test_root_causes_are_named_across_runs(submission, runs):
    save(submission, verdict("softmax", "failed"))
    heads = checked_report(submission, ["heads"]).exercises[0]
    assert runs == [["heads"]]
    assert "softmax" in heads.note and "scores" not in heads.note


def test_checked_report_runs_only_what_is_missing(submission, runs):
    save(submission, verdict("scores"))
    report = checked_report(submission)
    assert runs == [["masking", "softmax", "heads", "training"]]
    assert [e.status for e in report.exercises] == ["passed"] + ["failed"] * 4
    assert report.points == 10.0 and report.max_points == 50.0
    checked_report(submission)
    assert len(runs) == 1


def test_checked_report_says_what_it_checks_before_it_does(submission, runs):
    told = []
    save(submission, verdict("scores"))
    checked_report(submission, before=lambda names: told.append((names, list(runs))))
    assert told == [(["masking", "softmax", "heads", "training"], [])]
    checked_report(submission, before=told.append)
    assert len(told) == 1


def test_a_save_during_the_checks_is_not_hidden(submission, runs, monkeypatch):
    def saved_meanwhile(snapshot, *args, **options):
        (submission / "scores.py").write_text("# saved while the checks ran\n")
        return checked(snapshot, *args, **options)

    checked = runner.check_snapshot
    monkeypatch.setattr(runner, "check_snapshot", saved_meanwhile)
    checked_report(submission)
    assert cached(submission, ["scores"]) is None
    assert cached(submission, ["masking", "softmax"]) is not None


def test_a_new_grader_version_forgets_old_verdicts(submission, monkeypatch):
    save(submission, verdict("scores"))
    monkeypatch.setattr(grader, "__version__", "99.0")
    assert cached(submission, ["scores"]) is None


def test_the_grader_digest_is_read_again_once_a_grader_file_changes(tmp_path, monkeypatch):
    """The digest is kept between calls (a watch asks it once a save), and a file edited since, or added, gives a new one."""
    own = tmp_path / "grader"
    own.mkdir()
    (own / "a.py").write_text("A = 1\n")
    monkeypatch.setattr(state, "GRADER_DIR", own)
    monkeypatch.setattr(state, "_grader_files", lambda: sorted(own.glob("*.py")))
    first, reads, read_bytes = state.grader_digest(), [], Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda path: reads.append(path) or read_bytes(path))
    assert state.grader_digest() == first
    assert reads == []  # nothing changed: nothing read
    (own / "a.py").write_text("A = 22\n")
    edited = state.grader_digest()
    (own / "b.py").write_text("")
    assert len({first, edited, state.grader_digest()}) == 3


def test_a_damaged_state_file_is_ignored(submission):
    (submission / ".grader").mkdir()
    (submission / ".grader" / "verdicts.json").write_text("{not json")
    (submission / ".grader" / "failing.json").write_text("[1, 2]")
    assert cached(submission) is None and State.load(submission).failing == {}
    save(submission, verdict("scores"))
    assert cached(submission, ["scores"]) is not None


def test_an_unwritable_state_folder_costs_only_the_memory(submission):
    (submission / ".grader").write_text("a file where the folder should be")
    save(submission, verdict("scores"))
    assert cached(submission, ["scores"]) is None
    assert state.write_json(submission, "hints.json", {}) is False


def test_writes_leave_no_temporary_files(submission):
    for _ in range(3):
        save(submission, verdict("scores"))
    assert sorted(p.name for p in (submission / ".grader").iterdir()) == ["verdicts.json"]


def test_a_damaged_verdict_is_checked_again(submission, runs):
    save(submission, verdict("scores"), verdict("masking"))
    path = submission / ".grader" / "verdicts.json"
    data = json.loads(path.read_text())
    del data["exercises"]["scores"]["verdict"]["checks"]
    data["exercises"]["masking"]["verdict"]["status"] = "great"
    data["exercises"]["masking"]["checks"] = "not a dict"
    path.write_text(json.dumps(data))
    assert State.load(submission).last() == {}
    report = checked_report(submission, ["scores", "masking"])
    assert runs == [["scores", "masking"]]
    assert [e.status for e in report.exercises] == ["failed", "failed"]
