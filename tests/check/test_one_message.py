"""One message per cause, each short: a failure's message within 25 lines, and a cause said once per exercise in the report."""

import shutil
from pathlib import Path

import pytest

from grader.check.checks.examples import examples, shown_inputs
from grader.check.report import cause, render
from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

WRONG = Path(__file__).resolve().parents[1] / "mutants" / "wrong"
LINES = 25
# Mistakes whose messages are long: exceptions on batched inputs, several arrays of 3 or 4 axes, many inputs.
MUTANTS = (
    "scores__dot_T",
    "masking__first_axis_size",
    "softmax__wrong_axis",
    "heads__concat_first_axis",
    "heads__keys_from_wq",
    "heads__interleaved",
    "training__head_backward_no_scale",
    "training__train_reversed",
)


def verdict(tmp_path: Path, mutant: str):
    """The mutant's exercise checked with the public and hidden checks on a student's profile (which shrinks), the rest the reference."""
    folder = tmp_path / mutant
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    exercise = mutant.split("__")[0]
    shutil.copy(WRONG / f"{mutant}.py", folder / f"{exercise}.py")
    return folder, run_checks(folder, [exercise])


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS)
def test_each_failure_is_said_within_25_lines(tmp_path, mutant):
    _, report = verdict(tmp_path, mutant)
    failed = [c for c in report.exercises[0].checks if c.status != "passed"]
    assert failed
    long = {
        c.id: len(c.message.splitlines()) for c in failed if len(c.message.splitlines()) > LINES
    }
    assert long == {}, long


@pytest.mark.slow
def test_a_cause_is_said_once_in_the_report(tmp_path):
    folder, report = verdict(tmp_path, "masking__first_axis_size")
    failed = [c for c in report.exercises[0].checks if c.status != "passed"]
    causes = [cause(c.message) for c in failed]
    assert len(set(causes)) < len(causes)  # two checks fail the same way
    text = render(report, folder)
    for said in set(causes):
        first = next(c for c in failed if cause(c.message) == said)
        assert text.count(first.message.splitlines()[0]) == 1
    assert text.count("fails the same way as") == len(causes) - len(set(causes))


def test_causes_differ_by_what_is_wrong_not_by_the_numbers():
    raised = "f raised ValueError: matmul: size {} is different from 2 (scores.py, line 8: return q @ k.T)."
    assert (
        cause(raised.format(3))
        == cause(raised.format(4))
        != cause(raised.format(3).replace("line 8", "line 9"))
    )
    assert cause("x should have shape (2, 1), but it has shape (1, 2).") == cause(
        "x should have shape (3, 1), but it has shape (1, 3)."
    )
    lead = "At the sizes `grader compare` uses (141 positions), this check fails:\n"
    assert cause(lead + "softmax(x) contains NaN") != cause(lead + "out is not what it should be")


def test_a_worked_example_with_many_inputs_names_them_by_shape():
    example = examples("heads.multi_head_attention")[0]
    shown = shown_inputs(example)
    assert len(shown) == 8 and all(repr(v).startswith("an array of shape") for v in shown.values())
    small = examples("scores.attention_scores")[0]
    # q (3, 2) and k (5, 2): in full
    assert not any(repr(v).startswith("an array of shape") for v in shown_inputs(small).values())
