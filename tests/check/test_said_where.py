"""Messages that say which part is wrong: the four gradients of a head's backward pass, and a breakpoint() left in the code."""

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
        (SOLUTIONS_DIR / "softmax.py").read_text(encoding="utf-8").replace("def softmax(x):\n", "def softmax(x):\n    breakpoint()\n", 1)
    )
    checks = checked(tmp_path, "softmax", source)
    failed = [c for c in checks.values() if c.status == "failed"]
    assert failed and all(
        "stopped at a breakpoint()" in c.message and "stops only when `grader try` runs your own exercises/" in c.message for c in failed
    )
    assert not any("raised BdbQuit" in c.message for c in failed)
