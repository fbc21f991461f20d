"""`grader status` and `grader` alone, driven as a student would, with the checks stood in for."""

import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from grader import style
from grader.check import runner
from grader.check.files import hashes_for
from grader.check.results import CheckResult, ExerciseResult, Report
from grader.cli import main
from grader.exercises import BY_NAME, NAMES
from grader.paths import KIT_ROOT, SOLUTIONS_DIR

MASKING_WRONG = (
    "apply_causal_mask(scores) must be -inf above the diagonal\n  scores = [[0., 0.], [0., 0.]]"
)


def stand_in(monkeypatch, statuses):
    """Replace the checks: each exercise gets the status given (not started when not named); returns the calls."""
    calls = []

    def check_snapshot(snapshot, exercises=None, saved=None, rerun=True, **options):
        todo = [name for name in exercises if rerun or name not in saved]
        calls.append(todo)
        known = dict(saved)
        for name in todo:
            status = statuses.get(name, "not_started")
            message = MASKING_WRONG if status == "failed" else ""
            got = BY_NAME[name].points if status == "passed" else 0.0
            check = CheckResult(f"{name}.property", status, message)
            files = hashes_for(snapshot.files, name)  # the run's snapshot
            known[name] = ExerciseResult(
                name, status, got, BY_NAME[name].points, [check], files=files
            )
        runner.note_root_causes(list(known.values()))
        return Report([known[name] for name in exercises], seed=1)

    monkeypatch.setattr(runner, "check_snapshot", check_snapshot)
    return calls


def grader(*args):
    """Run the grader's command line as a student would; the result."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_first_run_welcomes_then_says_what_to_do(submission, monkeypatch):
    stand_in(monkeypatch, {})
    result = grader("status", "--submission", str(submission))
    assert result.exit_code == 0
    assert result.output.startswith("Welcome to Attention by Hand")
    assert "checking your five exercises" in result.output
    rows = [
        line.split()[2] for line in result.output.splitlines() if re.match(r"\s+\S \d\. ", line)
    ]
    assert rows == list(NAMES)
    assert "0 of 100 points" in result.output
    assert "Next: fill in attention_scores()" in result.output
    assert "watch" in result.output.split("Next:")[1]


def test_second_run_reuses_the_verdict_without_a_welcome(submission, monkeypatch):
    calls = stand_in(monkeypatch, {})
    grader("status", "--submission", str(submission))
    again = grader("status", "--submission", str(submission))
    assert calls == [list(NAMES)]
    assert "Welcome" not in again.output and "checking" not in again.output
    assert "Next: fill in attention_scores()" in again.output


def test_a_saved_file_rechecks_that_exercise_and_those_built_on_it(submission, monkeypatch):
    calls = stand_in(monkeypatch, {})
    grader("status", "--submission", str(submission))
    (submission / "softmax.py").write_text((SOLUTIONS_DIR / "softmax.py").read_text())
    result = grader("status", "--submission", str(submission))
    assert calls[1] == ["softmax", "heads", "training"]
    assert "checking softmax, heads, training…" in result.output


def test_a_failing_exercise_is_named_with_its_problem_and_a_hint(submission, monkeypatch):
    stand_in(monkeypatch, {"scores": "passed", "masking": "failed"})
    result = grader("status", "--submission", str(submission))
    assert "15 of 100 points, 1 of 5 passed" in result.output
    assert (
        "Next: masking fails: apply_causal_mask(scores) must be -inf above the diagonal"
        in result.output
    )
    assert "hint masking" in result.output and "check masking" in result.output
    assert "scores = [[" not in result.output  # the counterexample is for `grader check`


def test_all_passed_unlocks_the_comparison(submission, monkeypatch):
    stand_in(monkeypatch, dict.fromkeys(NAMES, "passed"))
    result = grader("status", "--submission", str(submission))
    assert "100 of 100 points, 5 of 5 passed" in result.output
    assert "The comparison is unlocked." in result.output
    assert re.search(r"Next: run `\S.* compare --submission \S+`: it trains", result.output)


def test_the_next_steps_name_the_folder_they_are_about(submission, monkeypatch):
    stand_in(monkeypatch, {"scores": "passed", "masking": "failed"})
    result = grader("status", "--submission", str(submission))
    for command in ("compare", "check masking", "hint masking"):
        assert f"{command} --submission {submission}`" in result.output
    monkeypatch.chdir(submission.parent)
    assert "--submission" not in grader("status").output  # ./exercises needs no --submission


def test_grader_with_submission_and_no_command_is_status_of_that_folder(submission, monkeypatch):
    stand_in(monkeypatch, {"scores": "passed"})
    result = grader("--submission", str(submission))
    assert result.exit_code == 0
    assert f"Your attention, by hand ({submission}{os.sep})" in result.output
    assert "Next: fill in causal_mask(), apply_causal_mask()" in result.output


def test_grader_with_submission_hands_it_to_the_command(submission, tmp_path, monkeypatch):
    calls = stand_in(monkeypatch, {"scores": "passed"})
    result = grader("--submission", str(submission), "check", "scores")
    assert (
        result.exit_code == 0
        and f"Checked {submission} " in result.output
        and calls == [["scores"]]
    )
    other = tmp_path / "nowhere"
    assert (
        "nowhere does not exist"
        in grader("--submission", str(submission), "status", "--submission", str(other)).output
    )
    clash = grader("--submission", str(submission), "check", "--solutions")
    assert clash.exit_code == 2 and "give one of them" in clash.output
    elsewhere = grader(
        "--submission", str(submission), "batch", str(submission), "--csv", str(tmp_path / "g.csv")
    )
    assert elsewhere.exit_code == 2 and "`grader batch` does not take it" in elsewhere.output


def test_locked_comparison_says_when_it_unlocks(submission, monkeypatch):
    stand_in(monkeypatch, {"scores": "passed"})
    assert "unlocks when all five pass" in grader("status", "--submission", str(submission)).output


def test_grader_alone_is_status(submission, monkeypatch):
    stand_in(monkeypatch, {"scores": "passed"})
    monkeypatch.chdir(submission.parent)
    result = grader()
    assert result.exit_code == 0
    assert f"Your attention, by hand (exercises{os.sep})" in result.output
    assert (
        f"Next: fill in causal_mask(), apply_causal_mask() in exercises{os.sep}masking.py"
        in result.output
    )


def test_a_missing_folder_says_what_to_do(tmp_path):
    result = CliRunner().invoke(main, ["status", "--submission", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "--submission" in result.output and "Traceback" not in result.output


def test_a_folder_without_the_modules_says_which_are_missing(submission):
    (submission / "heads.py").unlink()
    result = CliRunner().invoke(main, ["status", "--submission", str(submission)])
    assert result.exit_code == 2
    assert "heads.py" in result.output


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    class Terminal:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert style.colour_on(Terminal())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not style.colour_on(Terminal())
    monkeypatch.delenv("NO_COLOR")
    assert not style.colour_on(open(__file__))


def test_commands_are_named_as_the_notebook_s_student_types_them_only_where_asked(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/somewhere/bin/python3", "-c"])
    outside = style.command("check", "softmax")
    with style.commands_as("grader"):
        assert style.command("check", "softmax") == "grader check softmax"
    assert style.command("check", "softmax") == outside != "grader check softmax"
    assert sys.argv[0] == "/somewhere/bin/python3"  # nothing rewritten


def test_output_to_a_pipe_has_no_escape_codes(submission, monkeypatch):
    stand_in(monkeypatch, {"scores": "passed", "masking": "failed"})
    assert "\x1b[" not in grader("status", "--submission", str(submission)).output


@pytest.mark.slow
def test_the_real_checks_on_fresh_stubs(submission):
    result = grader("status", "--submission", str(submission))
    assert result.exit_code == 0
    assert result.output.count("not started") == 5
    assert "Next: fill in attention_scores()" in result.output


def run_grader_as(python_setup: str) -> subprocess.CompletedProcess:
    """`python -m grader` in a fresh interpreter after some set-up code."""
    code = f"import runpy, sys; {python_setup}; sys.argv = ['grader']; runpy.run_module('grader', run_name='__main__')"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=KIT_ROOT, capture_output=True, text=True
    )


def test_an_old_python_is_told_what_to_do():
    result = run_grader_as("sys.version_info = (3, 10, 12)")
    assert result.returncode == 2
    assert "needs Python 3.11 or newer" in result.stderr and "README" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_python_without_the_kit_is_told_what_to_do():
    result = run_grader_as("sys.modules['click'] = None")
    assert result.returncode == 2
    assert "not installed" in result.stderr and ".venv/bin/grader" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_first_problem_of_an_at_scale_failure_goes_past_its_lead_in():
    """The at-scale message starts 'At the sizes grader compare uses (...), this check fails:': the line after says what fails."""
    from grader.check.checks.scale import SAID
    from grader.check.results import CheckResult, ExerciseResult
    from grader.student.status import first_problem

    check = CheckResult(
        "masking.apply_at_scale",
        "failed",
        f"{SAID}\n  apply_causal_mask(scores) should put -inf where j > i.\n  scores = ...",
    )
    said = first_problem(ExerciseResult("masking", "failed", 0.0, 15.0, [check]))
    assert said.startswith(SAID) and said.endswith(
        "apply_causal_mask(scores) should put -inf where j > i."
    )


def test_the_next_step_points_at_the_earlier_exercise_at_fault(submission):
    """training cannot be imported because masking.py cannot: the file to fix, the check and the hint are masking's."""
    from grader.student.status import step

    check = CheckResult(
        "training.one",
        "error",
        "your training.py cannot be imported: expected ':' (masking.py, line 13).",
    )
    note = "training.py imports your masking.py, which cannot be imported: fix masking first, then check training again."
    result = ExerciseResult("training", "error", 0.0, 30.0, [check], note=note, cause="masking")
    said = step(BY_NAME["training"], result, submission)
    assert said.startswith(f"Next: training cannot be run: {note}")
    assert (
        "masking.py: " in said
        and "check masking" in said
        and "hint masking" in said
        and "training.py:" not in said
    )
