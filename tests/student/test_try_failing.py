"""`grader try` on the input of the check the function last failed (kept by `grader check`), on one the student gives, else on a worked example."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import kit
from grader.check.checks.examples import examples
from grader.cli import main
from grader.paths import SOLUTIONS_DIR

MUTANTS = Path(__file__).resolve().parents[1] / "mutants" / "wrong"

FLOAT32_SOFTMAX = """import numpy as np


def softmax(x):
    x = x.astype(np.float32)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
"""
ZIP_TRAIN = """
def train(model, batches, steps, lr):
    losses = []
    for (x, y), _ in zip(batches, range(steps)):
        loss, grads = model.loss_and_grads(x, y)
        sgd_step(model.params, grads, lr)
        losses.append(float(loss))
    return losses
"""


@pytest.fixture(autouse=True)
def at_home(tmp_path, monkeypatch):
    """Run the grader beside the student's own exercises/, where grader check keeps what try uses."""
    monkeypatch.chdir(tmp_path)


def work(tmp_path, module: str | None = None, source: str = "") -> str:
    folder = tmp_path / "exercises"  # the student's own, beside where the grader runs (at_home)
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    if module == "training":  # the reference's train replaced by the one in source
        text = (folder / "training.py").read_text(encoding="utf-8")
        (folder / "training.py").write_text(
            text[: text.index("def train(")] + source.lstrip(), encoding="utf-8"
        )
    elif module:
        (folder / f"{module}.py").write_text(source, encoding="utf-8")
    return str(folder)


def grader(*args):
    return CliRunner().invoke(main, list(args))


@pytest.mark.slow
def test_try_uses_the_failing_checks_input_and_names_the_float32(tmp_path):
    folder = work(tmp_path, "softmax", FLOAT32_SOFTMAX)
    assert grader("check", "softmax", "--submission", folder).exit_code == 1
    tried = grader("try", "softmax", "--submission", folder)
    assert tried.exit_code == 1, tried.output
    assert "softmax on the input of the failing check softmax." in tried.output
    # the check's own words
    assert "should keep the precision of its input, but its dtype is float32" in tried.output
    assert (
        "Your result is float32, but the input is float64" in tried.output
        and "they differ" in tried.output
    )


@pytest.mark.slow
def test_try_train_shows_the_batches_it_took(tmp_path):
    folder = work(tmp_path, "training", ZIP_TRAIN)
    assert grader("check", "training", "--submission", folder).exit_code == 1
    tried = grader("try", "training", "train", "--submission", folder)
    assert (
        "train on the input of the failing check training.train_steps_by_its_definition (kept by grader check at "
        in tried.output
    )
    assert (
        "'batches taken': 2" in tried.output
        and "'batches taken': 1" in tried.output
        and tried.exit_code == 1
    )


@pytest.mark.slow
def test_once_the_check_passes_try_goes_back_to_the_worked_example(tmp_path):
    folder = work(tmp_path, "softmax", FLOAT32_SOFTMAX)
    grader("check", "softmax", "--submission", folder)
    shutil.copy(SOLUTIONS_DIR / "softmax.py", f"{folder}/softmax.py")
    assert grader("check", "softmax", "--submission", folder).exit_code == 0
    tried = grader("try", "softmax", "--submission", folder)
    assert (
        tried.exit_code == 0
        and "softmax on a small example:" in tried.output
        and "they agree" in tried.output
    )


@pytest.mark.slow
def test_a_damaged_record_falls_back_to_the_worked_example(tmp_path):
    folder = work(tmp_path, "softmax", FLOAT32_SOFTMAX)
    grader("check", "softmax", "--submission", folder)
    record = tmp_path / "exercises" / ".grader" / "failing.json"
    kept = json.loads(record.read_text())
    record.write_text(
        json.dumps({check: dict(found, args="not base64 at all!") for check, found in kept.items()})
    )
    tried = grader("try", "softmax", "--submission", folder)
    assert "softmax on a small example:" in tried.output and "Traceback" not in tried.output


@pytest.mark.slow
def test_the_students_kit_shows_the_worked_examples_stored_answer(tmp_path, monkeypatch):
    """The float32 softmax fails a worked example, whose answer the student's kit stores: try shows it.

    Try runs the input the report showed first: here the worked example's, the drawn checks' records taken away.
    """
    folder = work(tmp_path, "softmax", FLOAT32_SOFTMAX)
    grader("check", "softmax", "--submission", folder)
    record = tmp_path / "exercises" / ".grader" / "failing.json"
    record.write_text(
        json.dumps(
            {
                check: found
                for check, found in json.loads(record.read_text()).items()
                if "worked" in check
            }
        )
    )
    # the worked examples now, which the student's kit would read from its examples.npz
    examples("softmax.softmax")
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    tried = grader("try", "softmax", "--submission", folder)
    assert (
        "failing check softmax.worked_examples" in tried.output and "expected:" in tried.output
    ), tried.output
    assert "No expected value" not in tried.output and tried.exit_code == 1


@pytest.mark.slow
def test_the_students_kit_says_what_the_check_said(tmp_path, monkeypatch):
    """A drawn input whose answer no check knows: try shows the check's words instead, and the check's verdict (exit 1)."""
    folder = work(
        tmp_path, "masking", (MUTANTS / "masking__first_axis_size.py").read_text(encoding="utf-8")
    )
    examples("masking.apply_causal_mask")
    # public checks only, as in the student's kit
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    grader("check", "masking", "--submission", folder)
    record = tmp_path / "exercises" / ".grader" / "failing.json"
    kept = json.loads(record.read_text())
    # the drawn inputs only
    record.write_text(
        json.dumps({check: found for check, found in kept.items() if "worked" not in check})
    )
    tried = grader("try", "masking", "apply_causal_mask", "--submission", folder)
    assert (
        "No expected value for this input: the student's kit holds no reference solution; the check said: Position"
        in tried.output
    )
    assert "expected:" not in tried.output and tried.exit_code == 1, tried.output
    assert (
        "masking.each_position_sees_itself_and_the_past fails on this input: Position"
        in tried.output
    )


@pytest.mark.slow
def test_try_on_an_input_the_student_gives(tmp_path):
    folder = work(tmp_path)
    tried = grader(
        "try", "softmax", "--submission", folder, "--input", "x=np.array([[1.0, 2.0, -np.inf]])"
    )
    assert tried.exit_code == 0, tried.output
    assert (
        "softmax on your input:" in tried.output
        and "-inf" in tried.output
        and "they agree" in tried.output
    )
    tried = grader(
        "try",
        "scores",
        "--submission",
        folder,
        "--input",
        "q=[[1, 0]]",
        "--input",
        "k=[[1, 0], [0, 1]]",
    )
    assert (
        "attention_scores on your input:" in tried.output
        and "0.7071" in tried.output
        and tried.exit_code == 0
    )


def test_a_given_input_that_cannot_be_read_says_how_to_write_one(tmp_path):
    folder = work(tmp_path)
    for bad, words in (
        ("y=1", "write NAME=EXPR with NAME one of x"),
        ("x=np.arrray(1)", "could not be read (AttributeError"),
        ("x=", "write NAME=EXPR"),
    ):
        tried = grader("try", "softmax", "--submission", folder, "--input", bad)
        assert tried.exit_code == 2 and words in tried.output and "Traceback" not in tried.output, (
            tried.output
        )
    tried = grader("try", "training", "--submission", folder, "--input", "x=1")
    assert tried.exit_code == 2 and "name it" in tried.output


def test_the_students_kit_has_no_expected_value_for_a_given_input(tmp_path, monkeypatch):
    folder = work(tmp_path)
    # the worked examples now, which the student's kit would read from its examples.npz
    examples("softmax.softmax")
    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    tried = grader("try", "softmax", "--submission", folder, "--input", "x=[1.0, 2.0]")
    assert (
        "No expected value for this input: the student's kit holds no reference solution"
        in tried.output
    )
    assert "yours:" in tried.output and "expected:" not in tried.output
