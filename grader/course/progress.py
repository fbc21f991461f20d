"""A long run one can watch: how far it is and the time left, and what needs the instructor, gathered for the end.

On a terminal, one line redrawn in place: a bar, the count, the time taken and the time left. In a
log (not a terminal), a line a minute, so a run of 300 submissions says where it is without a line
per submission. The time left is the mean time per submission so far times those left: with jobs
in parallel, finished ones arrive faster than one takes, and the mean counts that. What needs the
instructor (a submission byte for byte the reference, a weaker confinement than asked, a fault of
the grader's) is gathered as it comes and said once, at the end, after the last progress line.
"""

import shutil
import sys
import threading
import time
from collections.abc import Callable

from grader import outlet

BAR = 24  # characters of the bar on a terminal
EVERY = 60.0  # seconds between two progress lines in a log
SHOWN = 20  # the most of one kind of note said at the end; the rest counted


def duration(seconds: float) -> str:
    """Seconds as 'h:mm:ss' or 'm:ss'."""
    seconds = max(int(round(seconds)), 0)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def time_left(done: int, total: int, elapsed: float) -> float | None:
    """Seconds left at the mean pace so far; None before the first is done."""
    if done <= 0:
        return None
    return elapsed / done * max(total - done, 0)


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """The progress of one run of `total` items, written to `stream` (default stdout): a bar on a terminal, a line a minute else."""

    def __init__(
        self,
        total: int,
        what: str = "graded",
        stream=None,
        clock: Callable[[], float] = time.monotonic,
        tty: bool | None = None,
    ):
        self.total, self.what, self.done = total, what, 0
        self.stream = stream if stream is not None else sys.stdout
        self.tty = is_terminal(self.stream) if tty is None else tty
        self.clock = clock
        self.start = self.last = clock()
        self.drawn = False  # a bar is on the terminal's last line
        self.notes: dict[
            str, list[str]
        ] = {}  # what needs the instructor, by kind, in the order it came
        self.lock = threading.Lock()

    def line(self) -> str:
        """Where the run is, in one line: count, share, time taken and time left."""
        elapsed = self.clock() - self.start
        left = time_left(self.done, self.total, elapsed)
        share = self.done / self.total if self.total else 1.0
        when = f"{duration(elapsed)} so far" + (
            f", about {duration(left)} left" if left is not None and self.done < self.total else ""
        )
        return f"{self.done}/{self.total} {self.what} ({share:.0%}), {when}"

    def bar(self, last: str = "") -> str:
        """The bar and the line, then the last finished, within the terminal's width (a longer line would not redraw in place)."""
        filled = round(BAR * self.done / self.total) if self.total else BAR
        text = (
            "["
            + "#" * filled
            + "." * (BAR - filled)
            + "] "
            + self.line()
            + (f" · {last}" if last else "")
        )
        return text[: shutil.get_terminal_size().columns - 1]

    def step(self, count: int = 1, last: str = "") -> None:
        """count more items finished (last: the one just finished, in words): redraw the bar, or write a line when a minute
        has passed since the last line, and at the end."""
        last = outlet.terminal(last).replace("\n", " ")
        with self.lock:
            self.done += count
            if self.tty:
                self.stream.write("\r" + self.bar(last) + "\x1b[K")
                self.drawn = True
            elif self.clock() - self.last >= EVERY or self.done == self.total:
                self.stream.write(self.line() + (f"; last: {last}" if last else "") + "\n")
                self.last = self.clock()
            self.stream.flush()

    def erase(self) -> None:
        """Take the bar off the terminal's line, for another line to be printed there (redraw puts it back)."""
        with self.lock:
            if self.drawn:
                self.stream.write("\r\x1b[K")
                self.stream.flush()

    def redraw(self) -> None:
        """Draw the bar again below what was printed since erase."""
        with self.lock:
            if self.drawn:
                self.stream.write("\r" + self.bar() + "\x1b[K")
                self.stream.flush()

    def note(self, kind: str, text: str) -> None:
        """Keep something that needs the instructor for the end (text is shown through outlet.terminal; "" to count it only)."""
        with self.lock:
            self.notes.setdefault(kind, []).append(outlet.terminal(text))

    def clear(self) -> None:
        """Leave the bar's line, so that what is written next starts on a line of its own."""
        with self.lock:
            if self.drawn:
                self.stream.write("\n")
                self.stream.flush()
                self.drawn = False

    def summary(self) -> str:
        """What needs the instructor, kind by kind, or ""."""
        lines = []
        for kind, texts in self.notes.items():
            named = [text for text in texts if text]  # a note without text is counted only
            lines.append(f"{kind} ({len(texts)})" + (":" if named else "."))
            lines += [f"  {text}" for text in named[:SHOWN]]
            if len(named) > SHOWN:
                lines.append(f"  and {len(named) - SHOWN} more")
        return "\n".join(lines)

    def finish(self) -> None:
        """End the bar's line and say, once, everything gathered for the instructor."""
        self.clear()
        told = self.summary()
        if told:
            self.stream.write("For you to look at:\n" + told + "\n")
            self.stream.flush()
