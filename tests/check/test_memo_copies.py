"""What the memo hands out is a copy: equal to what the call gave, sharing nothing a check could change."""

import numpy as np

from grader.check.checks.workers import _copied
from grader.sandbox.handle import Outcome
from grader.sandbox.worker.codec import Batches, Foreign, ToyModel


def mutable_parts(value) -> set[int]:
    """The ids of every list, dict, array and dataclass within a value (the value itself included)."""
    mutable = isinstance(value, (list, dict, np.ndarray, Batches, ToyModel, Foreign))
    if isinstance(value, (Batches, ToyModel, Foreign)):
        inner = vars(value).values()
    else:
        inner = (
            value.values()
            if isinstance(value, dict)
            else value
            if isinstance(value, (list, tuple))
            else ()
        )
    return ({id(value)} if mutable else set()).union(*(mutable_parts(item) for item in inner))


def test_a_copied_outcome_is_equal_and_shares_nothing_mutable():
    pairs = [(np.ones((2, 3)), np.zeros((2, 1)))]
    outcome = Outcome(
        value=[
            np.arange(6.0).reshape(2, 3),
            {"w": np.ones(2), "n": 3},
            (np.float32(1.5), "s", None),
            Foreign("T", "t"),
        ],
        args=(ToyModel({"w": np.zeros((3, 1))}), Batches(pairs, 1), 10, 0.1),
        seconds=0.5,
        output="printed",
        warnings=("RuntimeWarning: overflow",),
    )
    copied = _copied(outcome)
    assert repr(copied) == repr(outcome)
    assert not mutable_parts((copied.value, copied.args)) & mutable_parts(
        (outcome.value, outcome.args)
    )
    copied.value[0][0, 0] = 99.0
    copied.args[1].pairs[0][0][0, 0] = 99.0
    assert outcome.value[0][0, 0] == 0.0 and pairs[0][0][0, 0] == 1.0
