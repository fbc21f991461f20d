"""Messages that say which part is wrong: which outputs or gradients, scores scaled wrong, and a breakpoint() left in the code."""

import shutil
from pathlib import Path

import pytest

from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

WRONG = Path(__file__).resolve().parents[1] / "mutants" / "wrong"


def checked(tmp_path, exercise: str, source: str) -> dict:
    """The public checks' verdicts of the reference with one module's source replaced, by check id."""
    folder = tmp_path / "work"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / f"{exercise}.py").write_text(source, encoding="utf-8")
    return {c.id: c for c in run_checks(folder, [exercise], checks="public").exercises[0].checks}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant", "said"),
    [
        ("training__head_backward_no_key_path", "d_x is wrong and d_w_q, d_w_k, d_w_v are right"),
        ("training__head_backward_no_scale", "d_x, d_w_q, d_w_k are wrong and d_w_v is right"),
    ],
)
def test_a_wrong_backward_pass_says_which_gradients_are_wrong(tmp_path, mutant, said):
    checks = checked(tmp_path, "training", (WRONG / f"{mutant}.py").read_text(encoding="utf-8"))
    message = checks["training.head_backward_finite_differences"].message
    assert f"Of the four gradients, {said}." in message, message
    assert len(message.splitlines()) <= 25


@pytest.mark.slow
def test_a_leftover_breakpoint_says_it_works_under_try_only(tmp_path):
    source = (
        (SOLUTIONS_DIR / "softmax.py")
        .read_text(encoding="utf-8")
        .replace("def softmax(x):\n", "def softmax(x):\n    breakpoint()\n", 1)
    )
    checks = checked(tmp_path, "softmax", source)
    failed = [c for c in checks.values() if c.status == "failed"]
    assert failed and all(
        "stopped at a breakpoint()" in c.message
        and "stops only when `grader try` runs your own exercises/" in c.message
        for c in failed
    )
    assert not any("raised BdbQuit" in c.message or "(Pdb)" in c.message for c in failed)
    assert all("(softmax.py, line 16: breakpoint())" in c.message for c in failed), failed[
        0
    ].message  # the line it stands on


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant", "check", "said"),
    [
        (
            "training__head_backward_no_key_path",
            "training.head_backward_worked_examples",
            "Of the four gradients, d_x is wrong and d_w_q, d_w_k, d_w_v are right.",
        ),
        (
            "heads__values_from_wk",
            "heads.head_worked_examples",
            "Of the two outputs, out is wrong and shares is right.",
        ),
        (
            "heads__scores_by_sqrt_C",
            "heads.head_worked_examples",
            "Both outputs, out and shares, are wrong.",
        ),
    ],
)
def test_a_worked_example_says_which_outputs_are_wrong(tmp_path, mutant, check, said):
    exercise = mutant.split("__")[0]
    message = checked(tmp_path, exercise, (WRONG / f"{mutant}.py").read_text(encoding="utf-8"))[
        check
    ].message
    assert said in message and len(message.splitlines()) <= 25, message


@pytest.mark.slow
def test_scores_scaled_by_another_number_than_sqrt_d_are_named_from_the_shares(tmp_path):
    """√C for √d is right where C = d (the example 'tiny'), and at 'batched' (C = 3, d = 2) the shares say by how much."""
    checks = checked(
        tmp_path, "heads", (WRONG / "heads__scores_by_sqrt_C.py").read_text(encoding="utf-8")
    )
    message = checks["heads.head_worked_examples"].message
    assert message.startswith("out, from attention_head on the worked example 'batched'"), message
    assert "Your shares are the softmax of the right scores times 0.816497 (= √2/√3)" in message
    assert "(q·k/√d, with d the size of a query, here 2)" in message
