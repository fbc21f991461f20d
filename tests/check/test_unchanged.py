"""What the checks believe of a call: inputs compared whole with the grader's copy, no narrower result, argument names from the signatures."""

import copy
import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.check.checks import harness, signatures
from grader.check.checks.harness import CheckFailed, expect_close
from grader.check.checks.unchanged import expect_unchanged
from grader.exercises import EXERCISES

ARRAYS = st.integers(1, 4).map(lambda n: np.arange(n, dtype=float))
VALUES = st.recursive(
    ARRAYS | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(VALUES)
def test_a_value_left_as_it_was_passes(value):
    expect_unchanged({"given": copy.deepcopy(value)}, [value], "f")


@pytest.mark.parametrize(
    "before, after, said",
    [
        (
            [(np.ones(2), np.ones(2))],
            [],
            "f changed its input heads; it must leave its inputs as they were",
        ),
        ([(np.ones(2), np.ones(2))], [], "It had 1 entry before the call and 0 entries after."),
        (
            {"w": np.ones(2), "b": np.ones(1)},
            {"b": np.ones(1), "w": np.ones(2)},
            "Its keys were in another order: ['w', 'b'] before",
        ),
        ({"w": np.ones(2)}, {}, "Its keys were: ['w'] before the call, [] after."),
        (
            [(np.ones(2), np.ones(2))],
            [(np.ones(2), np.zeros(2))],
            "f changed its input heads[0][1];",
        ),
        ([(np.ones(2),)], [[np.ones(2)]], "It was a tuple before the call and is a list after."),
        ({"w": np.ones(2)}, {"w": np.ones(2, dtype=np.float32)}, "f changed its input heads['w'];"),
    ],
)
def test_a_container_changed_anywhere_fails(before, after, said):
    """An emptied list, keys in another order, an entry changed deep inside, another kind or dtype: each fails, saying where."""
    with pytest.raises(CheckFailed) as failed:
        expect_unchanged({"heads": before}, [after], "f")
    assert said in str(failed.value)


def test_a_result_narrower_than_its_input_or_the_expected_one_fails():
    """float32 from float64 input, or where float64 is expected (an input held in a dict), fails; wider passes."""
    x = np.linspace(0, 1, 5)
    with pytest.raises(
        CheckFailed, match="y should keep the precision of its input, but its dtype is float32"
    ):
        expect_close(x.astype(np.float32), x, "y", {"x": x})
    with pytest.raises(
        CheckFailed, match="should be float64, as its input is, but its dtype is float32"
    ):
        expect_close(x.astype(np.float32), x, "y", {"params": {"w": x}})
    # float32 in, float64 out
    expect_close(x, x.astype(np.float32), "y", {"x": x.astype(np.float32)})


def test_a_result_less_precise_than_float64_fails_the_precise_comparison():
    x = np.linspace(0.1, 1, 7) / 3
    with pytest.raises(CheckFailed, match="less precise than float64 arithmetic"):
        harness.expect_precise(x.astype(np.float32).astype(np.float64), x, "y", {"x": x})
    harness.expect_precise(x * (1 + 1e-15), x, "y", {"x": x})


def test_argument_names_are_the_signatures_of_the_functions(pristine_modules):
    """ARG_NAMES holds every function's parameters, as the stubs (and the reference) declare them."""
    stubs = {
        f: tuple(inspect.signature(getattr(pristine_modules[e.name], f)).parameters)
        for e in EXERCISES
        for f in e.functions
    }
    assert harness.ARG_NAMES == stubs


def test_the_student_s_kit_reads_the_names_from_its_stubs_even_broken(
    monkeypatch, pristine, tmp_path
):
    """Without solutions/, the names come from exercises/; a module that no longer parses is read by its def lines."""
    for path in pristine.glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "scores.py").write_text(
        (pristine / "scores.py").read_text() + "\nthis is not python (\n"
    )
    monkeypatch.setattr(signatures, "SOLUTIONS_DIR", tmp_path / "none")
    monkeypatch.setattr(signatures, "EXERCISES_DIR", tmp_path)
    assert signatures.signatures() == harness.ARG_NAMES
