"""A run one can watch: the time left from the pace so far, a bar on a terminal, a line a minute in a log; notes at the end."""

import io

from hypothesis import given
from hypothesis import strategies as st

from grader.course.progress import EVERY, Progress, duration, time_left


class Clock:
    """A clock the test moves by hand: no sleeping."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def watched(total: int, tty: bool) -> tuple[Progress, io.StringIO, Clock]:
    stream, clock = io.StringIO(), Clock()
    return Progress(total, stream=stream, clock=clock, tty=tty), stream, clock


def test_the_time_left_is_the_mean_pace_so_far_times_those_left():
    assert time_left(0, 300, 50.0) is None  # nothing done: no pace to go by
    assert time_left(100, 300, 200.0) == 400.0 and time_left(300, 300, 600.0) == 0.0
    assert duration(59.6) == "1:00" and duration(3725) == "1:02:05"


@given(st.integers(1, 500), st.integers(1, 500), st.floats(0.01, 1e5))
def test_at_a_steady_pace_the_time_left_is_what_the_rest_takes(done, left, seconds_each):
    total = done + left
    assert (
        abs(time_left(done, total, done * seconds_each) - left * seconds_each)
        <= 1e-6 * total * seconds_each
    )


def test_on_a_terminal_one_line_is_redrawn_with_a_bar_and_the_time_left():
    progress, stream, clock = watched(4, tty=True)
    for _ in range(2):
        clock.now += 30
        progress.step(last="ada: passed, 100.0 points")
    shown = stream.getvalue()
    assert "\n" not in shown and shown.count("\r") == 2 and "\x1b[K" in shown
    assert shown.rsplit("\r", 1)[1].startswith(
        "[" + "#" * 12 + "." * 12 + "] 2/4 graded (50%), 1:00 so far, about 1:00 left"
    )
    progress.finish()
    assert stream.getvalue().endswith("\n")  # the next line starts on a line of its own


def test_in_a_log_a_line_a_minute_and_one_at_the_end():
    progress, stream, clock = watched(300, tty=False)
    for _ in range(299):
        clock.now += 1.0  # one a second: a line every EVERY seconds
        progress.step()
    lines = stream.getvalue().splitlines()
    assert (
        len(lines) == 299 // EVERY
        and "\r" not in stream.getvalue()
        and "\x1b" not in stream.getvalue()
    )
    assert lines[0] == "60/300 graded (20%), 1:00 so far, about 4:00 left"
    clock.now += 1.0
    progress.step(last="zed: graded, 40.0 points")
    assert (
        stream.getvalue().splitlines()[-1]
        == "300/300 graded (100%), 5:00 so far; last: zed: graded, 40.0 points"
    )


def test_what_needs_the_instructor_is_said_once_at_the_end_escaped_and_counted():
    progress, stream, _ = watched(30, tty=False)
    for n in range(25):
        progress.note("byte for byte the kit's reference solution", f"s{n}\x1b[2J: scores.py")
    assert stream.getvalue() == ""
    progress.finish()
    said = stream.getvalue()
    assert said.startswith(
        "For you to look at:\nbyte for byte the kit's reference solution (25):\n  s0\\x1b[2J: scores.py"
    )
    assert "\x1b" not in said and said.rstrip().endswith("and 5 more")


def test_the_terminal_is_told_from_a_log_by_the_stream_itself():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert Progress(1, stream=Terminal()).tty and not Progress(1, stream=io.StringIO()).tty
