"""What the check of train says: the batches as (x, y) pairs with how many train took, and the order it used them in."""

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from grader.check.checks.trained import Pairs, by_definition, order_note, order_used
from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

WRONG = Path(__file__).resolve().parents[1] / "mutants" / "wrong"
PARAMS = {"w": np.array([[0.5], [-0.25]]), "b": np.array([0.1])}
PAIRS = [(np.array([[1.0, 2.0]]) * (i + 1), np.array([[0.5 * i]])) for i in range(4)]


def train_message(tmp_path, mutant: str) -> str:
    """The public train check's message for the reference with this mutant as training.py."""
    folder = tmp_path / "work"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(WRONG / f"{mutant}.py", folder / "training.py")
    checks = {
        c.id: c
        for c in run_checks(folder, ["training"], checks="public", profile="quick")
        .exercises[0]
        .checks
    }
    return checks["training.train_steps_by_its_definition"].message


def test_the_order_used_is_found_from_the_losses():
    reversed_losses, _ = by_definition(PARAMS, PAIRS[1::-1], 2, 0.1)  # pair 2, then pair 1
    assert order_used(PARAMS, PAIRS, reversed_losses, 0.1) == [1, 0]
    in_order, _ = by_definition(PARAMS, PAIRS, 3, 0.1)
    assert order_used(PARAMS, PAIRS, in_order, 0.1) == [0, 1, 2] and order_note([0, 1, 2]) is None
    # a loss no pair gives: nothing said
    assert order_used(PARAMS, PAIRS, [in_order[0], 123.0], 0.1) is None
    assert "pairs 2, 1, numbered as batches gave them" in order_note([1, 0])
    assert "some pair more than once" in order_note([0, 0])


def test_the_batches_are_shown_as_numbered_pairs_with_how_many_were_taken():
    shown = repr(Pairs(PAIRS[:3], 2, listed=True))
    assert (
        shown.splitlines()[0]
        == "3 (x, y) pairs, in the order batches gives them; train took 2 of them:"
    )
    assert shown.splitlines()[1:] == [
        "  1: x = [[1., 2.]], y = [[0.]]",
        "  2: x = [[2., 4.]], y = [[0.5]]",
        "  3: x = [[3., 6.]], y = [[1.]]",
    ]
    many = [(np.full((4, 3), 0.123456789), np.full((4, 2), 0.5))] * 6
    assert len(repr(Pairs(many, 6, listed=True))) < 400 and "more, x of shape (4, 3)" in repr(
        Pairs(many, 6, listed=True)
    )
    assert (
        repr(Pairs(PAIRS, 0, listed=False))
        == "4 (x, y) pairs, in the order batches gives them; train took none of them; each x of shape (1, 2), each y of shape (1, 1)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("mutant", ["training__train_reversed", "training__train_shuffled"])
def test_batches_used_out_of_order_are_named(tmp_path, mutant):
    message = train_message(tmp_path, mutant)
    assert message.startswith("train used the batches in another order than given."), message
    assert "Your train used the same pairs in another order" in message
    assert len(message.splitlines()) <= 25


@pytest.mark.slow
def test_the_pairs_shown_are_as_many_as_were_given_beside_how_many_were_taken(tmp_path):
    message = train_message(tmp_path, "training__train_zip")
    given, taken = map(
        int,
        re.search(
            r"batches = (\d+) \(x, y\) pairs, in the order batches gives them; train took (\d+) of them",
            message,
        ).groups(),
    )
    steps = int(re.search(r"steps = (\d+)", message).group(1))
    assert taken == steps + 1 and given == steps + 2
    # one line per pair, x beside its y
    assert len(re.findall(r"^ +\d+: x = .*, y = ", message, re.M)) == given
