"""The failing input every way of checking keeps (watch's recheck, status, compare's gate), which `grader try` uses with the value the check expected."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import kit
from grader.check.checks.examples import examples
from grader.check.state import checked_report
from grader.cli import main
from grader.paths import SOLUTIONS_DIR
from grader.student import recheck

WRONG = Path(__file__).resolve().parents[1] / "mutants" / "wrong"


@pytest.fixture(autouse=True)
def at_home(tmp_path, monkeypatch):
    """Run the grader beside the student's own exercises/, where grader check keeps what try uses."""
    monkeypatch.chdir(tmp_path)


def work(tmp_path, module: str, mutant: str) -> Path:
    """The reference with one module replaced by a known wrong one."""
    folder = tmp_path / "exercises"  # the student's own, beside where the grader runs (at_home)
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(WRONG / f"{mutant}.py", folder / f"{module}.py")
    return folder


def tried(folder: Path, *args: str):
    return CliRunner().invoke(main, ["try", *args, "--submission", str(folder)])


@pytest.mark.slow
def test_watch_keeps_the_failing_input_that_try_then_uses(tmp_path):
    """The batch-only masking bug passes on the worked example: try must use the input watch's check failed on."""
    folder = work(tmp_path, "masking", "masking__first_axis_size")
    assert recheck.main(str(folder), "masking") == 0  # what watch runs for every save
    kept = json.loads((folder / ".grader" / "failing.json").read_text())
    assert {found["by"] for found in kept.values()} == {"watch"}
    result = tried(folder, "masking", "apply_causal_mask")
    assert (
        "on the input of the failing check masking." in result.output
        and "(kept by grader watch at " in result.output
    )
    assert "they differ" in result.output and result.exit_code == 1, result.output


@pytest.mark.slow
def test_compares_gate_keeps_the_failing_input_that_try_then_uses(tmp_path, monkeypatch):
    """compare checks all five before it trains: its gate keeps the failing inputs too, and try names it."""
    folder = work(tmp_path, "masking", "masking__first_axis_size")
    monkeypatch.setattr(
        "grader.compare.command.run_job",
        lambda *args, **kwargs: pytest.fail("compare trained past its gate"),
    )
    gate = CliRunner().invoke(main, ["compare", "--submission", str(folder)])
    assert gate.exit_code == 1 and "masking: fails" in gate.output, gate.output
    kept = json.loads((folder / ".grader" / "failing.json").read_text())
    assert kept and {found["by"] for found in kept.values()} == {"compare"}
    result = tried(folder, "masking", "apply_causal_mask")
    assert (
        "(kept by grader compare at " in result.output
        and "they differ" in result.output
        and result.exit_code == 1
    ), result.output


@pytest.mark.slow
def test_status_keeps_the_failing_input_and_keeps_other_exercises_inputs(tmp_path):
    """A check run for status keeps its input; a verdict read from the cache does not wipe the inputs kept before."""
    folder = work(tmp_path, "masking", "masking__first_axis_size")
    checked_report(folder, ["masking"], by="status")
    before = json.loads((folder / ".grader" / "failing.json").read_text())
    assert before and {found["by"] for found in before.values()} == {"status"}
    checked_report(folder, ["masking", "scores"], by="status")  # masking from the cache, scores run
    assert json.loads((folder / ".grader" / "failing.json").read_text()) == before


@pytest.mark.slow
def test_the_students_kit_shows_the_expected_value_the_property_gave(tmp_path, monkeypatch):
    """No reference in the student's kit, but the √d property knows its answer: try shows it."""
    folder = work(tmp_path, "scores", "scores__no_scale")
    recheck.main(str(folder), "scores")
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    result = tried(folder, "scores")
    assert (
        "failing check scores.ones_score_sqrt_d" in result.output and "expected:" in result.output
    ), result.output
    assert (
        "No expected value" not in result.output
        and "they differ" in result.output
        and result.exit_code == 1
    )


@pytest.mark.slow
def test_the_students_kit_shows_a_worked_examples_stored_answer(tmp_path, monkeypatch):
    """A failed worked example's answer is stored in the student's kit: try shows it rather than 'no reference'."""
    folder = work(tmp_path, "scores", "scores__transposed")
    recheck.main(str(folder), "scores")
    # the worked example's input alone: try runs the input the report showed first
    record = folder / ".grader" / "failing.json"
    record.write_text(
        json.dumps(
            {
                check: found
                for check, found in json.loads(record.read_text()).items()
                if "worked" in check
            }
        )
    )
    # the worked examples now, which the student's kit reads from its examples.npz
    examples("scores.attention_scores")
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    result = tried(folder, "scores")
    assert (
        "failing check scores.worked_examples" in result.output and "expected:" in result.output
    ), result.output
    # as the check says it
    assert "Its last two sizes are swapped: the result is transposed" in result.output
    assert "they differ" in result.output and result.exit_code == 1


@pytest.mark.slow
def test_the_students_kit_shows_the_gradient_the_finite_differences_found(tmp_path, monkeypatch):
    """softmax_backward without subtracting the weighted sum: the finite differences' gradient is try's expected value."""
    folder = work(tmp_path, "training", "training__softmax_backward_no_subtract")
    # the worked examples now, which the student's kit reads from its examples.npz
    examples("training.softmax_backward")
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    recheck.main(str(folder), "training")
    result = tried(folder, "training", "softmax_backward")
    assert (
        "failing check training.softmax_backward_finite_differences" in result.output
        and "expected:" in result.output
    ), result.output
    assert (
        "No expected value" not in result.output
        and "they differ" in result.output
        and result.exit_code == 1
    )


def test_only_lacking_an_expected_value_exits_0(tmp_path, monkeypatch):
    """In the student's kit a drawn input with no known answer is shown, not failed."""
    folder = tmp_path / "exercises"  # the student's own, beside where the grader runs (at_home)
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    examples("softmax.softmax")
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    result = tried(folder, "softmax", "--input", "x=[1.0, 2.0]")
    assert "No expected value for this input" in result.output and result.exit_code == 0, (
        result.output
    )


@pytest.mark.slow
def test_a_given_input_says_where_the_other_arguments_came_from_and_checks_their_shapes(
    tmp_path, monkeypatch
):
    """--input q=… alone: k comes from the example, said so; sizes that disagree stop before the student's code runs."""
    folder = tmp_path / "exercises"  # the student's own, beside where the grader runs (at_home)
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    d = examples("scores.attention_scores")[0].args()[1].shape[-1]
    result = tried(folder, "scores", "--input", f"q=np.ones((2, {d + 1}))")
    assert "on your input (q from --input; k from the small example):" in result.output
    assert (
        "Not run: these inputs do not fit together: q and k need the same last size d"
        in result.output
    )
    assert "Traceback" not in result.output and result.exit_code == 1, result.output
    result = tried(folder, "scores", "--input", f"q=np.ones((2, {d}))")
    assert "they agree" in result.output and result.exit_code == 0, result.output
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    result = tried(folder, "scores", "--input", f"q=np.ones((2, {d}))")
    assert (
        "the student's kit holds no reference solution; `" in result.output
        and "grader check scores` judges your function" in result.output
    )
