"""Messages that say where a result is wrong: transposed, a constant multiple, which columns of the heads' output, summarised arrays."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from grader.check.checks.harness import CheckFailed, fail, narrower, show
from grader.check.checks.where import (
    heads_columns,
    named,
    relation,
    scaled_shares,
    swapped_shape,
    which_wrong,
)
from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

WRONG = Path(__file__).resolve().parents[1] / "mutants" / "wrong"
RNG = np.random.default_rng(5)


def test_a_transposed_result_is_named():
    expected = RNG.normal(size=(2, 3, 3))
    assert "transposed" in relation(np.swapaxes(expected, -1, -2), expected)
    assert (
        "swapped" in swapped_shape((2, 5, 3), (2, 3, 5)) and swapped_shape((3, 3), (3, 3)) is None
    )


def test_a_constant_multiple_is_named_with_its_root():
    expected = RNG.normal(size=(3, 4))
    assert "times 0.5 (= 1/2) everywhere" in relation(expected / 2, expected)
    assert "(= √8)" in relation(expected * np.sqrt(8), expected)
    assert (
        relation(expected + 1, expected) is None
        and relation(np.array([[2.0]]), np.array([[1.0]])) is None
    )


def test_heads_left_without_w_o_interleaved_or_one_block_wrong():
    outs = [RNG.normal(size=(4, 2)) for _ in range(2)]
    w_o = RNG.normal(size=(4, 4))
    joined = np.concatenate(outs, axis=-1)
    assert "never multiplied by w_o" in heads_columns(joined, outs, w_o)
    assert "every other column" in heads_columns(
        np.stack(outs, axis=-1).reshape(4, 4) @ w_o, outs, w_o
    )
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
    assert (
        "The first entry to differ is at index (0, 1, 2, 3)" in message
        and "largest difference is at index (1, 0, 0, 0)" in message
    )
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
    assert checks["heads.multi_head_joins_the_heads"].status == "failed" and words in message, (
        message
    )
    assert len(message.splitlines()) <= 25


def test_a_float64_result_with_float32_digits_names_float32():
    q, k = RNG.normal(size=(3, 2)), RNG.normal(size=(5, 2))
    expected = q @ k.T / np.sqrt(2)
    inside = (q.astype(np.float32) @ k.astype(np.float32).T) / np.sqrt(2)
    with pytest.raises(CheckFailed) as failed:
        fail("scores should equal the worked example's.", {"q": q, "k": k}, expected, inside)
    assert "as float32 does" in str(failed.value) and inside.dtype == np.float64
    with pytest.raises(CheckFailed) as failed:
        fail(
            "scores should equal the worked example's.", {"q": q, "k": k}, expected, expected * 1.01
        )
    assert "float32" not in str(failed.value)
    # a mistake Hypothesis shrank to just beyond the tolerance
    near = expected + 7e-6 * np.abs(expected).max() * np.sign(expected)
    with pytest.raises(CheckFailed) as failed:
        fail("scores should equal the worked example's.", {"q": q, "k": k}, expected, near)
    assert "float32" not in str(failed.value)


def test_shares_of_scores_scaled_by_another_number_are_named():
    scores = np.where(np.tril(np.ones((4, 4), dtype=bool)), RNG.normal(size=(2, 4, 4)), -np.inf)

    def softmax(s):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    right = softmax(scores)
    assert "times 0.816497 (= √2/√3)" in scaled_shares(softmax(scores * np.sqrt(2 / 3)), right, 2)
    assert "times 1.41421 (= √2)" in scaled_shares(softmax(scores * np.sqrt(2)), right, 2)
    assert scaled_shares(right, right, 2) is None  # right shares: nothing to say
    # no mask: not a matter of scale
    assert scaled_shares(softmax(np.where(np.isinf(scores), 0.0, scores)), right, 2) is None
    assert scaled_shares(softmax(scores + RNG.normal(size=scores.shape)), right, 2) is None


def test_a_factor_is_named_when_it_is_a_simple_number():
    assert (
        named(np.sqrt(2 / 3)) == "0.816497 (= √2/√3)"
        and named(1 / np.sqrt(3)) == "0.57735 (= 1/√3)"
        and named(0.3) == "0.3"
    )


def test_which_outputs_are_wrong_and_which_right():
    assert (
        which_wrong(["out", "shares"], ["out"])
        == "  Of the two outputs, out is wrong and shares is right."
    )
    assert (
        which_wrong(["out", "shares"], ["out", "shares"])
        == "  Both outputs, out and shares, are wrong."
    )
    grads = ["d_x", "d_w_q", "d_w_k", "d_w_v"]
    assert (
        which_wrong(grads, grads, "gradients")
        == "  Of the four gradients, d_x, d_w_q, d_w_k, d_w_v are wrong: all four."
    )
    assert which_wrong(["scores"], ["scores"]) is None and which_wrong(grads, []) is None


def test_float32_is_said_to_keep_about_7_digits_in_both_notes():
    q = RNG.normal(size=(3, 2))
    assert "float32 keeps about 7 significant digits" in narrower(q.astype(np.float32), {"q": q})


def test_a_message_longer_than_25_lines_in_full_shows_its_arrays_by_their_start():
    """Inputs, expected and got of 7 lines each (each under the 8 lines of one array): 35 lines in full, so each is summarised."""
    x, expected = RNG.normal(size=(3, 2, 2)), RNG.normal(size=(3, 2, 3))
    heads = [tuple(RNG.normal(size=shape) for shape in ((2, 3), (2, 3), (2, 1))) for _ in range(2)]
    with pytest.raises(CheckFailed) as failed:
        fail("out is not what it should be.", {"x": x, "heads": heads}, expected, expected + 1.0)
    message = str(failed.value)
    assert len(message.splitlines()) <= 25, message
    assert "x = an array of shape (3, 2, 2), dtype float64, starting [" in message
    assert (
        "heads = 2 tuples of arrays, of shapes ((2, 3), (2, 3), (2, 1)) and ((2, 3), (2, 3), (2, 1))"
        in message
    )
    assert "The largest difference is at index" in message  # what says where stays
    with pytest.raises(CheckFailed) as failed:
        fail("out is not what it should be.", {"x": x[:1]}, expected[:1], expected[:1] + 1.0)
    assert "an array of shape" not in str(failed.value)  # short enough in full: shown in full


def test_parameters_by_name_are_shown_by_shape_when_they_do_not_fit_on_a_line():
    assert show({"w": np.array([1.0, 2.0])}) == "{'w': array([1., 2.])}"
    assert (
        show({"emb": np.zeros((40, 16)), "w_k": np.ones((32, 32))})
        == "{'emb': an array of shape (40, 16), 'w_k': an array of shape (32, 32)}"
    )
