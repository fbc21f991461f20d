"""`grader hint`: one more rung each time, remembered in the student's folder."""

import json
import re

from click.testing import CliRunner

from grader.check.cache import save_report
from grader.check.results import CheckResult, ExerciseResult, Report
from grader.cli import main
from grader.exercises import NAMES
from grader.student.hints import LADDERS


def hint(folder, exercise):
    """Ask for a hint as a student would; the result."""
    return CliRunner().invoke(main, ["hint", exercise, "--submission", str(folder)])


def test_every_exercise_has_a_ladder_of_three_or_four_rungs():
    assert set(LADDERS) == set(NAMES)
    assert all(3 <= len(ladder) <= 4 for ladder in LADDERS.values())


def test_no_rung_gives_the_code():
    code = re.compile(r"\w\([\w.]|\bdef \w+\(|\bfor \w+ in\b|=\s?np\.")  # a call with its arguments, a def, a loop
    for exercise, ladder in LADDERS.items():
        for rung in ladder:
            assert not code.search(rung), (exercise, rung)


def test_each_request_climbs_one_rung(submission):
    first = hint(submission, "softmax")
    assert first.exit_code == 0
    assert "Hint 1 of 4 for softmax" in first.output
    assert LADDERS["softmax"][0][:40] in first.output
    assert "again gives hint 2" in first.output
    second = hint(submission, "softmax")
    assert "Hint 2 of 4 for softmax" in second.output
    assert "Stability" in second.output and "The idea" in second.output  # earlier rungs stay in view


def test_the_place_is_remembered_in_the_state_folder(submission):
    hint(submission, "masking")
    hint(submission, "masking")
    hint(submission, "scores")
    assert json.loads((submission / ".grader" / "hints.json").read_text()) == {"masking": 2, "scores": 1}


def test_after_the_last_rung_it_says_so_and_points_on(submission):
    for _ in range(len(LADDERS["heads"])):
        result = hint(submission, "heads")
    assert "That was the last hint for heads" in result.output
    assert "heads.py" in result.output and "check heads" in result.output
    again = hint(submission, "heads")
    assert "Hint 4 of 4" in again.output and "That was the last hint" in again.output


def test_a_passed_exercise_is_mentioned(submission):
    check = CheckResult("scores.property", "passed")
    save_report(submission, Report([ExerciseResult("scores", "passed", 15.0, 15.0, [check])], seed=0))
    assert "scores already passes every check" in hint(submission, "scores").output


def test_an_unknown_exercise_lists_the_choices(submission):
    result = hint(submission, "sofmax")
    assert result.exit_code == 2
    assert "softmax" in result.output and "masking" in result.output


def test_an_unwritable_folder_still_gives_the_hint(submission):
    (submission / ".grader").write_text("not a folder")
    result = CliRunner().invoke(main, ["hint", "scores", "--submission", str(submission)])
    assert result.exit_code == 0
    assert "Hint 1 of 4 for scores" in result.output
    assert "could not be saved" in result.output


def test_a_damaged_place_starts_the_ladder_over(submission):
    (submission / ".grader").mkdir()
    (submission / ".grader" / "hints.json").write_text('{"scores": -3, "masking": "two"}')
    assert "Hint 1 of 4 for scores" in hint(submission, "scores").output
    assert "Hint 1 of 4 for masking" in hint(submission, "masking").output
