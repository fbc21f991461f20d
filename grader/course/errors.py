"""The course room's outcomes: what an instructor's command or a notebook cell refuses, each with a message that says why."""


class ReportError(Exception):
    """The CSV cannot be read as `grader batch` writes it; the message says why."""


class ReleaseError(Exception):
    """The release cannot be written as asked; the message says why and what to do."""


class Unreadable(Exception):
    """The submission's modules cannot be graded; the message says why, to the student."""


class NotPassed(Exception):
    """An exercise that does not pass the checks run here; shown in the notebook as one line, without a traceback."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of the traceback
        return [f"{type(self).__name__}: {self}"]
