"""`nbgrader autograde` one can watch: progress with the time left, the expected warnings left out, the rest gathered.

GradeModules starts one Watch per autograde run, on its first submission: the count and the time left
go to nbgrader's log stream (stderr), as a bar redrawn on a terminal (nbgrader's own lines printed
above it) or a line a minute in a log (grader/course/progress.py). Left out of the log, and counted:
the warning nbgrader gives for each graded cell of every submission that its checksum changed (that
is the hidden checks being put back, as they must be), and SQLAlchemy's warning per new submission.
What needs the instructor (a module byte for byte the reference, a confinement that does not keep
submissions apart, a fault of the grader's) is said once more at the end, from `nbgrader autograde`
on the command line (a server's autograde has no end of run to say it at).
"""

import atexit
import logging
import sys
import warnings
from pathlib import Path

from grader import stops
from grader.course.answering import COPIED
from grader.course.progress import Progress
from grader.exercises import NAMES
from grader.sandbox.isolation import APART

WEAKER = "graded with a confinement that does not keep submissions apart (allow_unisolated)"
FAULTS = "a fault of the grader's in these exercises (autograde them again)"

CHECKSUM = "Attribute '%s' for cell %s has changed! (should be: %s, got: %s)"  # nbgrader's OverwriteCells.report_change
KIT_CELLS = frozenset(f"test_{name}" for name in NAMES)
SESSION_WARNING = r"Object of type <Submitted\w+> not in session"  # SQLAlchemy 2.1's, for each new submission: harmless
_WATCHES: dict[int, "Watch"] = {}  # one per converter (an autograde run)
# from import: the first submission's comes before any Watch
warnings.filterwarnings("ignore", message=SESSION_WARNING)


class Expected(logging.Filter):
    """Leave out, and count, the checksum warnings of the kit's graded cells: autograde restores their hidden part every time."""

    def __init__(self):
        super().__init__()
        self.left_out = 0

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if (
            record.msg == CHECKSUM
            and len(args) > 1
            and args[0] == "checksum"
            and args[1] in KIT_CELLS
        ):
            self.left_out += 1
            return False
        return True


class Watch:
    """One autograde run: its progress, its filter, and what it gathered for the instructor."""

    def __init__(self, log: logging.Logger, total: int, stream=None):
        self.progress = Progress(total, stream=stream if stream is not None else sys.stderr)
        self.expected = Expected()
        self.students: set[str] = set()
        for handler in handlers(log):
            handler.addFilter(self.expected)
            if self.progress.tty and getattr(handler, "stream", None) is self.progress.stream:
                above_the_bar(handler, self.progress)

    def graded(self, student: str) -> None:
        """One more student graded (a student's second notebook is not counted again)."""
        if student not in self.students:
            self.students.add(student)
            self.progress.step(last=student)

    def finish(self) -> None:
        self.progress.finish()
        if self.expected.left_out:
            self.progress.stream.write(
                f"Left out of the log: {self.expected.left_out} warnings that a graded cell's checksum changed, which is "
                "autograde putting the hidden checks back.\n"
            )
            self.progress.stream.flush()


def command_line() -> bool:
    """Whether this process is nbgrader's command line, whose descendants are all autograde's own."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    return script.name == "nbgrader" or script.parts[-2:] == ("nbgrader", "__main__.py")


def handlers(log: logging.Logger) -> list[logging.Handler]:
    """The handlers a record of this logger reaches."""
    found: list[logging.Handler] = []
    current: logging.Logger | None = log
    while current is not None:
        found += current.handlers
        current = current.parent if current.propagate else None
    return found


def above_the_bar(handler: logging.Handler, progress: Progress) -> None:
    """Print the handler's lines above the bar: the bar erased first, drawn again after."""
    emit = handler.emit

    def emitted(record: logging.LogRecord) -> None:
        progress.erase()
        emit(record)
        progress.redraw()

    handler.emit = emitted  # type: ignore[method-assign]


def converter(preprocessor):
    """nbgrader's converter (the autograde run) a preprocessor belongs to, or None outside one."""
    current = preprocessor
    while current is not None and not hasattr(current, "assignments"):
        current = getattr(current, "parent", None)
    return current


def watch(preprocessor) -> Watch:
    """The Watch of this autograde run, started on its first submission (and said at the end, on the command line)."""
    run = converter(preprocessor)
    key = id(run)
    if key not in _WATCHES:
        total = len(getattr(run, "assignments", None) or {}) or 1
        _WATCHES[key] = Watch(preprocessor.log, total)
        if command_line():
            atexit.register(_WATCHES[key].finish)
            # a kill (a pod stopped) ends autograde as Ctrl-C does: the kernel's room removed, its folder given back
            stops.for_good()
    return _WATCHES[key]


def graded(preprocessor, student: str, grading: dict) -> None:
    """One submission graded by GradeModules: what needs the instructor noted, the progress moved on."""
    watched = watch(preprocessor)
    if grading.get("copied"):
        watched.progress.note(
            COPIED, f"{student}: {', '.join(f'{name}.py' for name in grading['copied'])}"
        )
    if grading.get("isolation") not in (*APART, "-"):
        watched.progress.note(WEAKER, f"{student}: {grading.get('isolation')}")
    if grading.get("faulted"):
        watched.progress.note(FAULTS, f"{student}: {', '.join(grading['faulted'])}")
    watched.graded(student)
