"""`grader hint`: a ladder per function, one more rung each time, remembered in the student's folder."""

import functools
import json
import re

import pytest
from click.testing import CliRunner

from grader.check.files import hashes_for, read_modules
from grader.check.results import CheckResult, ExerciseResult, Report
from grader.check.runner import run_checks
from grader.check.state import State
from grader.cli import main
from grader.exercises import BY_NAME, NAMES
from grader.paths import SOLUTIONS_DIR
from grader.student.hints import LADDERS, about_function, ladder_text


@functools.cache
def called() -> dict[str, tuple[str, ...]]:
    """Each check's id and the functions of its exercise it called, as a run of the reference records them."""
    report = run_checks(SOLUTIONS_DIR, profile="quick")
    return {check.id: check.calls for exercise in report.exercises for check in exercise.checks}


def hint(folder, exercise, *function):
    """Ask for a hint as a student would; the result."""
    return CliRunner().invoke(main, ["hint", exercise, *function, "--submission", str(folder)])


def verdict(folder, exercise, statuses):
    """Save a verdict of these check ids (exercise.name: status) as `grader check` would."""
    checks = [
        CheckResult(f"{exercise}.{name}", status, calls=called().get(f"{exercise}.{name}", ()))
        for name, status in statuses.items()
    ]
    status = "passed" if all(c.status == "passed" for c in checks) else "failed"
    files = hashes_for(read_modules(folder), exercise)  # as of the files as they are
    State(folder).save(
        Report(
            [ExerciseResult(exercise, status, 0.0, BY_NAME[exercise].points, checks, files=files)],
            seed=0,
        )
    )


def test_every_function_has_a_ladder_of_three_or_four_rungs():
    assert tuple(LADDERS) == NAMES
    assert all(tuple(LADDERS[name]) == BY_NAME[name].functions for name in NAMES)
    assert all(
        3 <= len(ladder) <= 4 for functions in LADDERS.values() for ladder in functions.values()
    )


def test_no_rung_gives_the_code():
    # a call with its arguments, a def, a loop
    code = re.compile(r"\w\([\w.]|\bdef \w+\(|\bfor \w+ in\b|=\s?np\.")
    for exercise, functions in LADDERS.items():
        for function, ladder in functions.items():
            for rung in ladder:
                assert not code.search(rung), (exercise, function, rung)


def test_nothing_points_outside_the_kit():
    commands = set(main.commands)
    for exercise, functions in LADDERS.items():
        for function in functions:
            texts = [
                *functions[function],
                ladder_text(exercise, function, len(functions[function]), True, f"{exercise}.py"),
            ]
            for text in texts:
                assert not re.search(r"lesson|notes|slides|lecture", text, re.IGNORECASE), (
                    function,
                    text,
                )
                assert set(re.findall(r"grader (\w+)", text)) <= commands, (function, text)


@pytest.mark.slow
def test_every_check_records_the_functions_of_its_exercise_it_called():
    """The runner keeps what each check called (the harness sees every call): hints read it, not the checks' source."""
    about = called()
    assert len(about) >= 30
    for check, functions in about.items():
        exercise = check.split(".")[0]
        assert functions and set(functions) <= set(BY_NAME[exercise].functions), check
    for exercise in NAMES:
        last = {
            functions[-1] for check, functions in about.items() if check.startswith(exercise + ".")
        }
        # every function has a check of its own
        assert last == set(BY_NAME[exercise].functions), exercise


def test_checks_named_otherwise_map_to_the_function_they_call():
    expected = {
        "masking.causal_mask_is_the_lower_triangle": "causal_mask",
        "masking.each_position_sees_itself_and_the_past": "apply_causal_mask",
        "heads.head_is_causal": "attention_head",
        "heads.multi_head_joins_the_heads": "multi_head_attention",
        "training.head_backward_finite_differences": "attention_head_backward",
        "training.sgd_step_moves_downhill": "sgd_step",
        "training.train_steps_by_its_definition": "train",
    }
    assert {
        check: about_function(CheckResult(check, "failed", "out is off", calls=called()[check]))
        for check in expected
    } == expected


def test_a_check_of_several_functions_is_about_the_one_it_failed_on():
    check = "training.inputs_unchanged"
    assert called()[check] == ("softmax_backward", "attention_head_backward", "sgd_step")
    failed_first = CheckResult(
        check,
        "failed",
        "the message's words do not matter",
        calls=called()[check],
        blamed_function="softmax_backward",
    )
    assert about_function(failed_first) == "softmax_backward"
    assert (
        about_function(CheckResult(check, "failed", "softmax_backward, say", calls=called()[check]))
        == "sgd_step"
    )
    assert about_function(CheckResult("training.gone_since", "failed")) is None


@pytest.mark.slow
def test_a_check_that_failed_at_its_first_call_is_about_that_function(tmp_path):
    """A check that stops at its first function is about that one: the run records what was called, not what could be."""
    folder = tmp_path / "exercises"
    folder.mkdir()
    for name in NAMES:
        (folder / f"{name}.py").write_bytes((SOLUTIONS_DIR / f"{name}.py").read_bytes())
    source = (folder / "training.py").read_text(encoding="utf-8")
    scaled = "    shares *= 1.5  # changes its input\n    dot = np.sum(d_shares * shares"
    (folder / "training.py").write_text(
        source.replace("    dot = np.sum(d_shares * shares", scaled), encoding="utf-8"
    )
    report = run_checks(folder, ["training"], profile="quick")
    checks = {c.id: c for c in report.exercises[0].checks}
    assert checks["training.inputs_unchanged"].status == "failed" and checks[
        "training.inputs_unchanged"
    ].calls == ("softmax_backward",)
    assert checks["training.inputs_unchanged"].blamed_function == "softmax_backward"


def test_each_request_climbs_one_rung(submission):
    first = hint(submission, "softmax")
    assert first.exit_code == 0
    assert "Hint 1 of 4 for softmax: softmax(x)" in first.output
    assert LADDERS["softmax"]["softmax"][0][:40] in first.output
    assert "again gives hint 2" in " ".join(first.output.split())
    second = hint(submission, "softmax")
    assert "Hint 2 of 4 for softmax" in second.output
    # earlier rungs stay in view
    assert "Stability" in second.output and "The idea" in second.output


def test_a_named_function_gets_its_own_ladder_and_names_the_others(submission):
    result = hint(submission, "training", "sgd_step")
    assert result.exit_code == 0
    assert "Hint 1 of 3 for training: sgd_step(params, grads, lr)" in result.output
    said = " ".join(result.output.split())
    # the folder it was given
    assert re.search(r"hint training sgd_step --submission \S+` again gives hint 2", said), said
    assert re.search(
        r"hint training FUNCTION --submission \S+` with FUNCTION softmax_backward, attention_head_backward or train\.",
        said,
    )
    assert "Hint 2 of 3 for training: sgd_step" in hint(submission, "training", "sgd_step").output
    assert "Hint 1 of 3 for training: train(" in hint(submission, "training", "train").output


def test_without_a_verdict_it_starts_with_the_first_function(submission):
    result = hint(submission, "training")
    assert "Hint 1 of 3 for training: softmax_backward" in result.output
    assert "your last check" not in result.output


def test_it_starts_with_the_first_function_the_last_check_did_not_pass(submission):
    verdict(
        submission,
        "training",
        {
            "softmax_backward_finite_differences": "passed",
            "head_backward_finite_differences": "failed",
            "sgd_step_moves_downhill": "not_started",
            "train_steps_by_its_definition": "not_started",
        },
    )
    result = hint(submission, "training")
    assert "Hint 1 of 4 for training: attention_head_backward" in result.output
    assert (
        "attention_head_backward is the first function of training that your last check did not pass"
        in result.output
    )


def test_a_function_whose_checks_all_pass_is_skipped_even_by_checks_named_otherwise(submission):
    verdict(
        submission,
        "masking",
        {
            "causal_mask_is_the_lower_triangle": "passed",
            "causal_mask_worked_examples": "passed",
            "each_position_sees_itself_and_the_past": "not_started",
        },
    )
    assert "Hint 1 of 4 for masking: apply_causal_mask" in hint(submission, "masking").output


def test_a_passed_exercise_is_mentioned_and_starts_at_its_first_function(submission):
    verdict(
        submission, "heads", {"head_is_causal": "passed", "multi_head_joins_the_heads": "passed"}
    )
    result = hint(submission, "heads")
    assert "heads already passes every check" in result.output
    assert "Hint 1 of 4 for heads: attention_head" in result.output


def test_the_place_is_remembered_per_function_in_the_state_folder(submission):
    hint(submission, "masking")
    hint(submission, "masking")
    hint(submission, "masking", "apply_causal_mask")
    hint(submission, "scores")
    saved = json.loads((submission / ".grader" / "hints.json").read_text())
    assert saved == {
        "masking": {"causal_mask": 2, "apply_causal_mask": 1},
        "scores": {"attention_scores": 1},
    }


def test_after_the_last_rung_it_says_so_and_points_on(submission):
    for _ in range(len(LADDERS["heads"]["multi_head_attention"])):
        result = hint(submission, "heads", "multi_head_attention")
    assert "That was the last hint for multi_head_attention" in result.output
    said = " ".join(result.output.split())
    assert (
        "heads.py" in said
        and "check heads --submission" in said
        and "try heads multi_head_attention --submission" in said
    )
    again = hint(submission, "heads", "multi_head_attention")
    assert "Hint 4 of 4" in again.output and "That was the last hint" in again.output


def test_an_unknown_exercise_lists_the_choices(submission):
    result = hint(submission, "sofmax")
    assert result.exit_code == 2
    assert "softmax" in result.output and "masking" in result.output


def test_an_unknown_function_lists_the_exercise_s_functions(submission):
    result = hint(submission, "training", "sgd")
    assert result.exit_code == 2
    assert (
        "training has no function sgd: choose one of softmax_backward, attention_head_backward, sgd_step, train"
        in result.output
    )
    assert not (submission / ".grader" / "hints.json").exists()


def test_an_unwritable_folder_still_gives_the_hint(submission):
    (submission / ".grader").write_text("not a folder")
    result = hint(submission, "scores")
    assert result.exit_code == 0
    assert "Hint 1 of 4 for scores" in result.output
    assert "could not be saved" in result.output


def test_a_damaged_place_starts_the_ladder_over(submission):
    (submission / ".grader").mkdir()
    (submission / ".grader" / "hints.json").write_text(
        '{"scores": {"attention_scores": -3}, "masking": {"causal_mask": "two"}}'
    )
    assert "Hint 1 of 4 for scores" in hint(submission, "scores").output
    assert "Hint 1 of 3 for masking: causal_mask" in hint(submission, "masking").output


def test_an_old_format_place_starts_the_ladder_over(submission):
    (submission / ".grader").mkdir()
    (submission / ".grader" / "hints.json").write_text('{"training": 3, "scores": 2}')
    assert "Hint 1 of 3 for training: softmax_backward" in hint(submission, "training").output
    assert json.loads((submission / ".grader" / "hints.json").read_text()) == {
        "training": {"softmax_backward": 1}
    }
