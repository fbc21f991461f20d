"""A call made before in the same run, on the same arguments, is answered by what came of it then."""

import gc
import shutil
import textwrap
import time

import numpy as np
import pytest

from grader.check.checks.workers import StudentCodePool
from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR
from grader.sandbox.errors import StudentError
from grader.sandbox.handle import Outcome
from grader.sandbox.helper import HELPER

COUNTING = """
import numpy as np

calls = 0


def softmax(x):
    global calls
    calls += 1
    if x.shape == (1, 1):
        raise ValueError(f"call {calls}")
    return np.full(x.shape, float(calls))
"""


@pytest.fixture
def workers(tmp_path):
    folder = tmp_path / "exercises"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "softmax.py").write_text(textwrap.dedent(COUNTING), encoding="utf-8")
    pool = StudentCodePool(folder)
    yield pool
    pool.close()


def test_the_same_call_is_answered_from_memory_and_another_is_made(workers):
    x = np.zeros((2, 3))
    first = workers.call(frozenset(), "softmax", "softmax", (x,))
    again = workers.call(frozenset(), "softmax", "softmax", (x.copy(),))
    other = workers.call(frozenset(), "softmax", "softmax", (np.zeros((2, 4)),))
    assert first.value[0, 0] == again.value[0, 0] == 1.0 and other.value[0, 0] == 2.0
    again.value[0, 0] = 99.0  # a check that changes what it got changes nothing for the next
    assert workers.call(frozenset(), "softmax", "softmax", (x,)).value[0, 0] == 1.0


def test_a_failure_is_remembered_too(workers):
    x = np.zeros((1, 1))
    with pytest.raises(StudentError) as first:
        workers.call(frozenset(), "softmax", "softmax", (x,))
    with pytest.raises(StudentError) as again:
        workers.call(frozenset(), "softmax", "softmax", (x,))
    assert (
        first.value.kind == again.value.kind == "raised"
        and first.value.message == again.value.message
    )
    assert "call 1" in again.value.message


def test_the_reference_served_is_part_of_the_call(workers):
    x = np.zeros((2, 3))
    mine = workers.call(frozenset(), "softmax", "softmax", (x,))
    # another worker: counts from 1 too
    served = workers.call(frozenset({"scores.attention_scores"}), "softmax", "softmax", (x,))
    assert mine.value[0, 0] == served.value[0, 0] == 1.0
    assert len(workers.memo) == 2


@pytest.mark.slow
def test_a_run_keeps_no_answer_once_it_ends(tmp_path):
    """nbgrader grades every student in its own process, where pytest keeps each run's plugins: the memo must not stay with them."""
    folder = tmp_path / "exercises"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    before = outcomes()
    # heads asks the reference for scores, masking and softmax
    report = run_checks(folder, exercises=["heads"])
    assert report.exercises[0].status == "passed"
    assert outcomes() - before == set() and HELPER.kept == {}


def outcomes() -> set[int]:
    """The ids of the calls' outcomes still alive in this process."""
    gc.collect()
    return {id(o) for o in gc.get_objects() if isinstance(o, Outcome)}


def test_calls_at_the_comparisons_sizes_may_take_longer_within_the_budget(workers):
    """A correct loop at the comparison's sizes is slow, not hung: those calls get PATIENCE times the limit, never past the budget."""
    from grader.check.checks.workers import PATIENCE

    assert workers.limit() == workers.timeout == 10.0
    with workers.patient():
        assert workers.limit() == PATIENCE * 10.0
    assert workers.limit() == 10.0
    workers.deadline = time.monotonic() + 12.0
    with workers.patient():
        assert 11.0 < workers.limit() <= 12.0
