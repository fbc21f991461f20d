"""nbgrader autograde one can watch: its expected warnings left out and counted, its own lines above the bar."""

import io
import logging

from grader.course.nbgrader.watching import CHECKSUM, Watch


class Terminal(io.StringIO):
    def isatty(self):
        return True


def logger(name: str, stream) -> logging.Logger:
    log = logging.getLogger(f"abh-test-{name}")
    log.handlers[:] = [logging.StreamHandler(stream)]
    log.propagate = False
    log.setLevel(logging.INFO)
    return log


def test_the_checksum_warnings_of_the_kits_graded_cells_are_left_out_and_counted_and_no_other():
    stream = io.StringIO()
    log = logger("quiet", stream)
    watch = Watch(log, 2, stream=stream)
    log.warning(CHECKSUM, "checksum", "test_softmax", "abc", "def")
    log.warning(CHECKSUM, "checksum", "a_cell_of_their_own", "abc", "def")
    # a changed point value is not expected
    log.warning(CHECKSUM, "points", "test_softmax", 20, 100)
    log.warning("For the instructor: ada's scores.py is byte for byte the kit's reference solution")
    lines = stream.getvalue().splitlines()
    assert (
        len(lines) == 3
        and "a_cell_of_their_own" in lines[0]
        and "'points'" in lines[1]
        and "byte for byte" in lines[2]
    )
    watch.graded("ada")
    watch.graded("ada")  # a second notebook of the same student
    watch.graded("bo")
    watch.finish()
    said = stream.getvalue()
    # not a terminal: the last line only, within the minute
    assert "1/2 graded" not in said and "2/2 graded (100%)" in said
    assert "Left out of the log: 1 warnings that a graded cell's checksum changed" in said


def test_on_a_terminal_the_logs_lines_go_above_the_bar():
    stream = Terminal()
    log = logger("terminal", stream)
    watch = Watch(log, 3, stream=stream)
    watch.graded("ada")
    log.info("Autograding bo")
    shown = stream.getvalue()
    erased, _, after = shown.partition("\r\x1b[K")
    assert (
        "1/3 graded" in erased
        and after.startswith("Autograding bo\n")
        and "\r[" in after
        and "1/3 graded" in after
    )
