"""A call's CPU limit counted from a sample taken before it: never less than the limit, and still a limit."""

import time

import psutil
import pytest

from grader.sandbox import launcher
from grader.sandbox.clock import SAMPLE_EVERY, Clock, Sample

BURN = "while True: pass"


@pytest.fixture
def burning():
    """A child that keeps one core busy until it is ended."""
    with launcher.Child(launcher.python("-c", BURN)) as child:
        yield psutil.Process(child.pid)


def test_what_ran_before_the_call_is_not_counted_against_it(burning):
    sample = Sample()
    sample.latest([burning])
    time.sleep(SAMPLE_EVERY * 0.6)  # the child burns CPU that the next call did not use
    clock = Clock(burning.pid, 0.2, [burning], sample)
    assert clock.slack >= SAMPLE_EVERY * 0.6
    # past the earliest moment the limit could be reached, but the call itself has used about 0.12 s
    time.sleep(0.12)
    assert clock.over() is None


def test_a_call_that_computes_past_its_limit_is_stopped_by_it(burning):
    sample = Sample()
    clock = Clock(burning.pid, 0.3, [burning], sample)
    deadline = time.monotonic() + 20
    while (which := clock.over()) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert which == "cpu"
    assert burning.cpu_times().user + burning.cpu_times().system >= 0.3


def test_a_sample_serves_for_a_while_then_is_taken_again(burning):
    sample = Sample()
    first = sample.latest([burning])
    assert sample.latest([burning])[0] == first[0]  # the same sample, not another look
    time.sleep(SAMPLE_EVERY)
    assert sample.latest([burning])[0] > first[0]
