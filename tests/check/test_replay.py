"""Hypothesis' examples kept and replayed: the same verdicts and messages as drawing them afresh, and a record that is used."""

import shutil
from pathlib import Path

import pytest

from grader.check.checks import replay
from grader.check.checks.scale import SAID
from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR
from grader.sandbox.worker.codec import encode

MUTANTS = Path(__file__).resolve().parents[1] / "mutants"


def with_module(folder: Path, exercise: str, module: Path) -> Path:
    """The reference with one module replaced."""
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(module, folder / f"{exercise}.py")
    return folder


def said(report) -> list[tuple]:
    """Every check's id, status and message."""
    return [(c.id, c.status, c.message) for e in report.exercises for c in e.checks]


def records(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.examples"))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(replay.CACHE_VAR, str(folder))
    return folder


@pytest.mark.slow
def test_a_passing_run_keeps_the_examples_and_a_failing_mutant_gets_the_same_message_either_way(
    tmp_path, cache, monkeypatch
):
    first = run_checks(SOLUTIONS_DIR, ["softmax"])
    kept = records(cache)
    assert len(kept) == 7  # six public drawn checks and the hidden one
    wrong = with_module(
        tmp_path / "wrong", "softmax", MUTANTS / "wrong" / "softmax__epsilon_below.py"
    )
    replayed = run_checks(wrong, ["softmax"])
    monkeypatch.setenv(replay.CACHE_VAR, "off")
    drawn = run_checks(wrong, ["softmax"])
    assert said(replayed) == said(drawn)
    assert any(status == "failed" for _, status, _ in said(drawn))
    assert said(first) == said(run_checks(SOLUTIONS_DIR, ["softmax"]))


@pytest.mark.slow
def test_the_record_is_what_runs_the_check(tmp_path, cache, monkeypatch):
    run_checks(SOLUTIONS_DIR, ["scores"])
    (record,) = [p for p in records(cache) if "public.test_scores.test_ones_score_sqrt_d" in p.name]
    # one example only, on which dividing by d is right (1/1 = 1/√1)
    record.write_bytes(encode([((), {"d": 1})]))
    wrong = with_module(tmp_path / "wrong", "scores", MUTANTS / "wrong" / "scores__divides_by_d.py")
    checks = {c.id: c for c in run_checks(wrong, ["scores"]).exercises[0].checks}
    # the record is trusted (it lives where no student's code can write): only the run at the comparison's sizes is left to fail
    assert checks["scores.ones_score_sqrt_d"].message.startswith(SAID)
    monkeypatch.setenv(replay.CACHE_VAR, "off")
    drawn = {c.id: c for c in run_checks(wrong, ["scores"]).exercises[0].checks}
    # drawn afresh, a small d shows it first
    assert not drawn["scores.ones_score_sqrt_d"].message.startswith(SAID)


@pytest.mark.slow
def test_a_record_a_replayed_example_fails_is_drawn_again_and_rewritten(cache):
    run_checks(SOLUTIONS_DIR, ["scores"])
    (record,) = [p for p in records(cache) if "public.test_scores.test_ones_score_sqrt_d" in p.name]
    whole = record.read_bytes()
    record.write_bytes(encode([((), {"d": "four"})]))  # an example the reference fails on
    assert run_checks(SOLUTIONS_DIR, ["scores"]).exercises[0].status == "passed"
    assert record.read_bytes() == whole


@pytest.mark.slow
def test_an_unreadable_record_is_drawn_again(cache):
    run_checks(SOLUTIONS_DIR, ["masking"])
    for record in records(cache):
        record.write_bytes(b"not a record")
    assert run_checks(SOLUTIONS_DIR, ["masking"]).exercises[0].status == "passed"
    assert all(record.read_bytes() != b"not a record" for record in records(cache))


@pytest.mark.slow
def test_off_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(replay.CACHE_VAR, "off")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert run_checks(SOLUTIONS_DIR, ["masking"]).exercises[0].status == "passed"
    assert not list(tmp_path.rglob("*.examples"))


@pytest.mark.slow
def test_another_version_of_the_checks_or_libraries_has_records_of_its_own(cache, monkeypatch):
    run_checks(SOLUTIONS_DIR, ["masking"])
    monkeypatch.setattr(replay.hypothesis, "__version__", "0.0.0")
    replay.examples_version.cache_clear()
    try:
        run_checks(SOLUTIONS_DIR, ["masking"])
    finally:
        replay.examples_version.cache_clear()
    assert len({p.parent for p in records(cache)}) == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    "mutant",
    [
        "scores__no_scale",
        "masking__block_size_8",
        "softmax__no_max_shift",
        "heads__interleaved",
        "training__train_zip",
        "training__sgd_climbs",
    ],
)
def test_replayed_and_drawn_verdicts_agree(tmp_path, cache, monkeypatch, mutant):
    exercise = mutant.split("__")[0]
    run_checks(SOLUTIONS_DIR, [exercise])
    wrong = with_module(tmp_path / "wrong", exercise, MUTANTS / "wrong" / f"{mutant}.py")
    replayed = run_checks(wrong, [exercise])
    monkeypatch.setenv(replay.CACHE_VAR, "off")
    assert said(replayed) == said(run_checks(wrong, [exercise]))


def test_an_empty_or_unreadable_record_is_no_record(cache):
    where = cache / replay.examples_version()
    where.mkdir(parents=True)
    for name, data in {
        "empty": encode([]),
        "torn": encode([((), {})])[:-3],
        "not_a_list": encode({"d": 1}),
    }.items():
        (where / f"{name}.examples").write_bytes(data)
        assert replay.examples(name) is None, name
    (where / "kept.examples").write_bytes(encode([((), {"d": 1})]))
    assert replay.examples("kept") == [((), {"d": 1})]
