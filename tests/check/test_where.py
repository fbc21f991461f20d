"""Messages that say where a result is wrong: transposed, a constant multiple, which columns of the heads' output, summarised arrays."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from grader.check.checks.harness import CheckFailed, fail, show
from grader.check.checks.where import heads_columns, relation, swapped_shape
from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

WRONG = Path(__file__).resolve().parents[1] / "mutants" / "wrong"
RNG = np.random.default_rng(5)


def test_a_transposed_result_is_named():
    expected = RNG.normal(size=(2, 3, 3))
    assert "transposed" in relation(np.swapaxes(expected, -1, -2), expected)
    assert "swapped" in swapped_shape((2, 5, 3), (2, 3, 5)) and swapped_shape((3, 3), (3, 3)) is None


def test_a_constant_multiple_is_named_with_its_root():
    expected = RNG.normal(size=(3, 4))
    assert "times 0.5 (= 1/2) everywhere" in relation(expected / 2, expected)
    assert "(= √8)" in relation(expected * np.sqrt(8), expected)
    assert relation(expected + 1, expected) is None and relation(np.array([[2.0]]), np.array([[1.0]])) is None


def test_heads_left_without_w_o_interleaved_or_one_block_wrong():
    outs = [RNG.normal(size=(4, 2)) for _ in range(2)]
    w_o = RNG.normal(size=(4, 4))
    joined = np.concatenate(outs, axis=-1)
    assert "never multiplied by w_o" in heads_columns(joined, outs, w_o)
    assert "every other column" in heads_columns(np.stack(outs, axis=-1).reshape(4, 4) @ w_o, outs, w_o)
    one_wrong = np.concatenate([outs[0], outs[1] * 3], axis=-1) @ w_o
    assert "columns 2..3 (head 1)" in heads_columns(one_wrong, outs, w_o)
    assert heads_columns(joined @ w_o, outs, w_o) is None


def test_a_large_array_is_summarised_and_the_first_difference_named():
    expected = RNG.normal(size=(2, 3, 4, 4))
    got = expected.copy()
    got[0, 1, 2, 3] += 1.0
    got[1, 0, 0, 0] += 5.0
    assert show(expected).startswith("an array of shape (2, 3, 4, 4), dtype float64, starting [")
    with pytest.raises(CheckFailed) as failed:
        fail("scores should equal the worked example's.", {"q": expected}, expected, got)
    message = str(failed.value)
    assert "The first entry to differ is at index (0, 1, 2, 3)" in message and "largest difference is at index (1, 0, 0, 0)" in message
    assert len(message.splitlines()) <= 8, message


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant", "words"),
    [("heads__no_w_o", "never multiplied by w_o"), ("heads__interleaved", "every other column")],
)
def test_the_heads_check_says_which_columns(tmp_path, mutant, words):
    folder = tmp_path / "work"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(WRONG / f"{mutant}.py", folder / "heads.py")
    checks = {c.id: c for c in run_checks(folder, ["heads"], checks="public").exercises[0].checks}
    message = checks["heads.multi_head_joins_the_heads"].message
    assert checks["heads.multi_head_joins_the_heads"].status == "failed" and words in message, message
    assert len(message.splitlines()) <= 25


def test_a_float64_result_with_float32_digits_names_float32():
    q, k = RNG.normal(size=(3, 2)), RNG.normal(size=(5, 2))
    expected = q @ k.T / np.sqrt(2)
    inside = (q.astype(np.float32) @ k.astype(np.float32).T) / np.sqrt(2)
    with pytest.raises(CheckFailed) as failed:
        fail("scores should equal the worked example's.", {"q": q, "k": k}, expected, inside)
    assert "as float32 does" in str(failed.value) and inside.dtype == np.float64
    with pytest.raises(CheckFailed) as failed:
        fail("scores should equal the worked example's.", {"q": q, "k": k}, expected, expected * 1.01)
    assert "float32" not in str(failed.value)
    near = expected + 7e-6 * np.abs(expected).max() * np.sign(expected)  # a mistake Hypothesis shrank to just beyond the tolerance
    with pytest.raises(CheckFailed) as failed:
        fail("scores should equal the worked example's.", {"q": q, "k": k}, expected, near)
    assert "float32" not in str(failed.value)
