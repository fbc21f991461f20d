"""`grader check` as a student and a script see it: messages, the table, --json per check.schema.json, exit codes."""

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.check.checks.examples import examples
from grader.check.report import render
from grader.check.results import (
    CheckResult,
    ExerciseResult,
    Report,
    exercise_status,
    partial_points,
)
from grader.check.runner import run_checks
from grader.cli import main
from grader.course.stubs import write_stubs
from grader.exercises import BY_NAME, NAMES
from grader.paths import SOLUTIONS_DIR

MUTANTS = Path(__file__).resolve().parents[1] / "mutants"
STATUSES = {"passed", "failed", "not_started", "error"}


def submission(folder: Path, **modules: str) -> Path:
    """A copy of the reference with some modules replaced by the given source text."""
    folder.mkdir()
    for module in SOLUTIONS_DIR.glob("*.py"):
        shutil.copy(module, folder)
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return folder


def mutant(name: str) -> str:
    """The source of a wrong implementation from tests/mutants/wrong."""
    return (MUTANTS / "wrong" / f"{name}.py").read_text(encoding="utf-8")


def assert_spec_json(data: dict, names: list[str]) -> None:
    """The --json of `grader check` has exactly the keys and types of check.schema.json."""
    assert set(data) == {"total", "checks", "isolation", "seed", "exercises"}
    assert data["checks"] in ("public", "all") and data["isolation"] in (
        "namespaces",
        "user",
        "none",
    )
    assert set(data["total"]) == {"points", "max_points"}
    assert [e["name"] for e in data["exercises"]] == names
    for exercise in data["exercises"]:
        assert set(exercise) == {
            "name",
            "status",
            "points",
            "max_points",
            "checks",
            "public",
            "hidden",
            "files",
            "same_as_reference",
            "functions",
        }
        functions = BY_NAME[exercise["name"]].functions
        assert list(exercise["functions"]) == list(functions)
        assert [f["max_points"] for f in exercise["functions"].values()] == list(
            BY_NAME[exercise["name"]].shares
        )
        assert all(
            0 <= f["points"] <= f["max_points"] and 0 <= f["passed"] <= f["checks"]
            for f in exercise["functions"].values()
        )
        if exercise["status"] != "error":
            assert sum(f["points"] for f in exercise["functions"].values()) == exercise["points"]
        assert f"{exercise['name']}.py" in exercise["files"] and all(
            len(h) == 64 for h in exercise["files"].values()
        )
        assert exercise["status"] in STATUSES
        assert isinstance(exercise["points"], float) and isinstance(exercise["max_points"], float)
        assert exercise["max_points"] == BY_NAME[exercise["name"]].points
        for check in exercise["checks"]:
            assert set(check) == {"id", "status", "message", "public", "functions"} and isinstance(
                check["public"], bool
            )
            assert (
                check["functions"]
                and set(check["functions"]) <= set(functions)
                and set(check["functions"].values()) <= STATUSES
            )
            assert check["id"].startswith(exercise["name"] + ".") and check["status"] in STATUSES
            assert isinstance(check["message"], str)
        for kind, public in (("public", True), ("hidden", False)):
            chosen = [c for c in exercise["checks"] if c["public"] is public]
            assert exercise[kind] == {
                "passed": sum(c["status"] == "passed" for c in chosen),
                "checks": len(chosen),
            }
        if exercise["status"] != "error":
            assert exercise["public"]["checks"] > 0 and (exercise["hidden"]["checks"] > 0) == (
                data["checks"] == "all"
            )
    assert data["total"]["points"] == sum(e["points"] for e in data["exercises"])
    assert data["total"]["max_points"] == sum(e["max_points"] for e in data["exercises"])


def test_points_round_down_to_half_points():
    """Partial credit is each function's share × its checks passed / its checks, rounded down to 0.5; full only when all pass."""
    checks = [CheckResult(f"x.{i}", "passed", functions={"softmax": "passed"}) for i in range(3)]
    checks.append(CheckResult("x.3", "failed", functions={"softmax": "failed"}))
    assert (
        partial_points(
            BY_NAME["scores"],
            [
                replace(c, functions={"attention_scores": s})
                for c, s in zip(checks, ["passed"] * 3 + ["failed"])
            ],
        )
        == 11.0
    )
    assert partial_points(BY_NAME["softmax"], checks[:2] + checks[3:]) == 13.0  # 13.33
    assert partial_points(BY_NAME["softmax"], checks[:3]) == 20.0
    assert partial_points(BY_NAME["softmax"], []) == 0.0


def test_exercise_status_from_checks():
    """An error wins, only stubs are not started, and passed means every check passed."""
    passed, failed = CheckResult("a.p", "passed"), CheckResult("a.f", "failed")
    stub, error = CheckResult("a.s", "not_started"), CheckResult("a.e", "error")
    assert exercise_status([passed, passed]) == "passed"
    assert exercise_status([passed, failed]) == "failed"
    assert exercise_status([stub, passed]) == "failed"
    assert exercise_status([stub, stub]) == "not_started"
    assert exercise_status([passed, error, stub]) == "error"
    assert exercise_status([]) == "error"


def test_report_round_trips_through_json():
    """Report.from_json(report.to_json()) gives back the same verdicts."""
    report = Report(
        [ExerciseResult("scores", "failed", 7.5, 15.0, [CheckResult("scores.a", "failed", "m")])],
        seed=3,
    )
    again = Report.from_json(report.to_json(), seed=3)
    assert again == report and again.points == 7.5 and not again.passed


@pytest.mark.slow
def test_failure_message_is_small_named_and_free_of_tracebacks(tmp_path):
    """A failed check shows the shrunk input, expected and got, the mistake's name, no grader code; every run alike."""
    folder = submission(tmp_path / "s", scores=mutant("scores__no_scale"))
    report = run_checks(folder, ["scores"])
    # the same verdict, word for word
    assert run_checks(folder, ["scores"]).to_json() == report.to_json()
    failed = [c for c in report.exercises[0].checks if c.status == "failed"]
    message = failed[0].message
    assert "expected:" in message and "got:" in message
    # the smallest q and k that show a missing √d: one row, d = 2
    assert "(shape (1, 2))" in message
    assert "without dividing by √d" in message
    assert "Traceback" not in message and "grader/" not in message


@pytest.mark.slow
def test_exception_in_student_code_fails_with_its_line(tmp_path):
    """An exception raised by the student's function fails the check and names the exception."""
    broken = mutant("softmax__whole_array").replace(
        "return e / np.sum(e)", 'raise ValueError("no idea")'
    )
    result = run_checks(
        submission(tmp_path / "s", softmax=broken), ["softmax"], profile="quick"
    ).exercises[0]
    assert result.status == "failed"
    assert all(
        "ValueError" in c.message and "Traceback" not in c.message
        for c in result.checks
        if c.status != "passed"
    )


@pytest.mark.slow
def test_hang_is_an_error_that_costs_one_function(tmp_path):
    """A function that never returns is an error after the time limit; the other exercises still pass."""
    hanging = (
        (SOLUTIONS_DIR / "softmax.py")
        .read_text()
        .replace("    top = np.max(", "    while True:\n        pass\n    top = np.max(")
    )
    report = run_checks(
        submission(tmp_path / "s", softmax=hanging),
        ["masking", "softmax"],
        profile="quick",
        timeout=1.0,
    )
    assert [e.status for e in report.exercises] == ["passed", "error"]
    assert all(c.status == "error" for c in report.exercises[1].checks)


def test_import_error_is_an_error(tmp_path):
    """A module that cannot be imported makes its exercise an error, not a failure."""
    report = run_checks(
        submission(tmp_path / "s", scores="def attention_scores(q, k)\n"),
        ["scores"],
        profile="quick",
    )
    assert report.exercises[0].status == "error" and report.exercises[0].points == 0.0


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    """A fresh copy of the stubs, as a student starts."""
    return write_stubs(tmp_path_factory.mktemp("stubs") / "exercises")


@pytest.mark.slow
def test_check_json_follows_the_spec(tmp_path):
    """`grader check --solutions --json FILE` exits 0 and writes check.schema.json's shape."""
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        main, ["check", "scores", "masking", "--solutions", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert_spec_json(data, ["scores", "masking"])
    assert data["total"] == {"points": 30.0, "max_points": 30.0}


@pytest.mark.slow
def test_check_on_stubs_exits_1_with_a_plain_table(stubs, tmp_path):
    """On the stubs: exit 1, no colour in a pipe, a row per exercise, the next step and the replay."""
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        main, ["check", "--submission", str(stubs), "--json", str(out)], env={"NO_COLOR": ""}
    )
    assert result.exit_code == 1, result.output
    assert "\x1b[" not in result.output
    for name in NAMES:
        assert any(
            line.split()[1:3] == [name, "not"]
            for line in result.output.splitlines()
            if len(line.split()) > 2
        )
    assert "0.0 / 100.0" in result.output
    assert f"Next: fill in attention_scores() in {stubs}{os.sep}scores.py" in result.output
    assert "Replay:" in result.output and "20240604" in result.output
    assert_spec_json(json.loads(out.read_text()), list(NAMES))


def test_unreadable_submission_exits_2(tmp_path):
    """A missing folder, or one without the five modules, is exit status 2 with a message."""
    runner = CliRunner()
    missing = runner.invoke(main, ["check", "--submission", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "scores.py").write_text("")
    half = runner.invoke(main, ["check", "--submission", str(tmp_path / "half")])
    assert half.exit_code == 2 and "masking.py" in half.output


def test_a_hidden_failure_behind_every_public_pass_is_named():
    """The full report says when an exercise passes every public check and fails a hidden one."""
    checks = [
        CheckResult("softmax.rows_sum_to_one", "passed", public=True),
        CheckResult("softmax.shift_invariant", "passed", public=True),
        CheckResult(
            "softmax.matches_reference",
            "failed",
            "softmax(x) is not what it should be",
            public=False,
        ),
    ]
    report = Report([ExerciseResult("softmax", "failed", 13.0, 20.0, checks)], seed=1, checks="all")
    text = render(report, Path("exercises"))
    assert "passes every public check (2 of 2) and fails 1 of 1 hidden" in text
    assert "softmax.matches_reference (failed, hidden)" in text
    assert report.to_json()["exercises"][0]["public"] == {"passed": 2, "checks": 2}
    assert report.to_json()["exercises"][0]["hidden"] == {"passed": 0, "checks": 1}


def test_the_student_kits_report_says_what_ran_and_claims_no_grade():
    """Public checks only: counts, never points out of 100, never "all passed", and the hidden checks named."""
    checks = [
        CheckResult("scores.ones_score_sqrt_d", "passed", public=True),
        CheckResult("scores.worked_examples", "passed", public=True),
    ]
    report = Report(
        [ExerciseResult("scores", "passed", 15.0, 15.0, checks)], seed=1, checks="public"
    )
    text = render(report, Path("exercises"))
    assert "public checks: 2 of 2 pass · the hidden checks run when your work is graded" in text
    assert "with the public checks" in text.splitlines()[0]
    assert (
        "/ 15.0" not in text
        and "points" not in text
        and "all passed" not in text.lower()
        and "every check" not in text.lower()
    )


def passing(names, checks="all") -> Report:
    """A report in which every named exercise passes its one public check."""
    results = [
        ExerciseResult(
            n,
            "passed",
            BY_NAME[n].points,
            BY_NAME[n].points,
            [CheckResult(f"{n}.p", "passed", public=True)],
        )
        for n in names
    ]
    return Report(results, seed=1, checks=checks)


def test_all_five_passing_unlocks_the_comparison_and_a_subset_says_what_remains(
    tmp_path, monkeypatch
):
    """With all five passing the report sends the student to compare now; with some checked, once the rest pass."""
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    every = render(passing(NAMES), mine)
    assert "All five exercises pass every check, public and hidden: run `" in every
    assert "compare --submission mine`." in every and "Once" not in every
    some = render(passing(["scores"]), mine)
    assert (
        "Every check that was run passes, public and hidden. Once all five exercises pass, run `"
        in some
    )
    public = render(passing(NAMES, "public"), mine)
    assert (
        "All five exercises pass their public checks: run `" in public
        and "every check" not in public.lower()
    )
    assert "Once all five exercises pass their public checks, run `" in render(
        passing(["scores"], "public"), mine
    )
    assert "The reference solutions pass every check" in render(
        passing(NAMES), SOLUTIONS_DIR, solutions=True
    )


def test_the_next_steps_carry_the_folder_checked(tmp_path, monkeypatch):
    """`grader check --submission DIR`: the check, hint and replay commands it suggests are about DIR too."""
    monkeypatch.chdir(tmp_path)
    checks = [CheckResult("softmax.rows_sum_to_one", "failed", "rows do not sum to 1", public=True)]
    report = Report([ExerciseResult("softmax", "failed", 0.0, 20.0, checks)], seed=1, checks="all")
    text = render(report, tmp_path / "mine")
    assert "check softmax --submission mine`" in text and "hint softmax --submission mine`" in text


def test_a_missing_module_says_where_its_stub_is(tmp_path):
    """A copy without a module is pointed at the kit's exercises/; the kit's own exercises/ at where the kit came from."""
    from grader.paths import EXERCISES_DIR
    from grader.sandbox.submission import where_to_get

    assert str(EXERCISES_DIR) in where_to_get(tmp_path, ["heads.py"])
    own = where_to_get(EXERCISES_DIR, ["heads.py"])
    assert "exercises/ folder" not in own and f"git -C {EXERCISES_DIR} checkout -- heads.py" in own


def test_a_dead_worker_is_described_without_contradicting_itself():
    """os._exit is told to go, a SIGKILL (the kernel's answer to far too much memory) points at memory, not ctypes."""
    import signal

    from grader.sandbox.errors import _Failed

    exited = _Failed("crashed", 3).describe("softmax", 10)
    assert (
        exited
        == "softmax ended the Python process (exit status 3, as os._exit does) instead of returning: remove that call and return the result."
    )
    if hasattr(signal, "SIGKILL"):
        killed = _Failed("crashed", -signal.SIGKILL).describe("softmax", 10)
        assert (
            "far too much memory" in killed
            and "array far too large" in killed
            and "ctypes" not in killed
        )


@pytest.mark.slow
def test_the_root_cause_is_named_when_only_the_later_exercise_is_asked_for(tmp_path, monkeypatch):
    """masking checked (and failing) earlier, then `grader check heads` alone: heads' report says to fix masking first."""
    # the student's own exercises/, where grader check keeps its verdicts
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "exercises"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    wrong = Path(__file__).resolve().parents[1] / "mutants" / "wrong" / "masking__fills_zero.py"
    shutil.copy(wrong, folder / "masking.py")
    assert (
        CliRunner().invoke(main, ["check", "masking", "--submission", str(folder)]).exit_code == 1
    )
    alone = CliRunner().invoke(main, ["check", "heads", "--submission", str(folder)])
    assert (
        "heads uses your masking, which fails its checks" in alone.output
        and "fix masking first" in alone.output
    ), alone.output


def test_an_earlier_module_that_cannot_be_imported_is_named_as_the_cause(tmp_path, monkeypatch):
    """The student's kit, masking.py with a syntax error and never checked: `grader check training` alone says to fix masking first."""
    from grader import kit

    # the worked examples now, which the student's kit reads from its examples.npz
    examples("training.softmax_backward")
    # training runs with the student's own masking
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    broken = (
        (SOLUTIONS_DIR / "masking.py")
        .read_text(encoding="utf-8")
        .replace("def causal_mask(T):", "def causal_mask(T)", 1)
    )
    folder = submission(tmp_path / "work", masking=broken)
    result = CliRunner().invoke(main, ["check", "training", "--submission", str(folder)])
    assert result.exit_code == 1
    assert (
        "Note: training.py imports your masking.py, which cannot be imported: fix masking first"
        in result.output
    ), result.output
    assert "Next: fix masking first (the note above says why), then run `" in result.output
    assert (
        "grader check masking training --submission" in result.output
        and "grader hint masking --submission" in result.output
    )
    assert (
        "fix what stops training.py" not in result.output
        and "could not finish" not in result.output
    )


@pytest.mark.slow
def test_an_earlier_function_a_check_found_wrong_is_named_as_the_cause(tmp_path, monkeypatch):
    """The student's kit, masking wrong on batches and never checked: training's finite differences call it, and the note says so."""
    from grader import kit

    # the worked examples now, which the student's kit reads from its examples.npz
    examples("training.softmax_backward")
    # training runs with the student's own masking
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    folder = submission(tmp_path / "work", masking=mutant("masking__first_axis_size"))
    result = CliRunner().invoke(main, ["check", "training", "--submission", str(folder)])
    said = "Note: training's checks call your own apply_causal_mask (in masking.py), and the message says it went wrong there: fix masking first"
    assert result.exit_code == 1 and said in result.output, result.output
    assert "grader check masking training --submission" in result.output
