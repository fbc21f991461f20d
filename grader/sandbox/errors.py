"""The sandbox's outcomes: how a call of student code can fail, the words for a dead worker, and what else the grader's side refuses.

The worker's own exceptions (imports.Refused, worker.NoTerminal) live in its modules: it is given
those alone (grader/sandbox/worker/), not this one.
"""

import signal

WINDOWS_CRASHES = {
    0xC0000005: "access violation (a segmentation fault)",
    0xC00000FD: "stack overflow",
    0xC0000409: "fast fail",
}


class StudentError(Exception):
    """The student's code did not return a value; kind says how, message says it to the student.

    Kind "grader" is the grader's own fault (it could not start or talk to its worker): the report
    says so and never asks the student to change their file for it.
    """

    KINDS = (
        "not_started",
        "raised",
        "timeout",
        "crashed",
        "import",
        "bad_output",
        "refused",
        "memory",
        "grader",
    )

    def __init__(self, kind: str, message: str, output: str = "", module: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.output = output
        self.module = module  # for an import that failed: the student's module whose file the error is in, when known


class _Failed(Exception):
    """The worker gave no reply: it timed out, died, used too much memory, or sent something unreadable."""

    def __init__(self, kind, status=None, detail=""):
        super().__init__(kind)
        self.kind, self.status, self.detail = kind, status, detail

    def describe(self, what, limit):
        """The student-facing sentence; for an import, only how the process ended."""
        if (
            self.kind == "timeout" and "on the clock" in self.detail
        ):  # the wall-clock backstop (grader.sandbox.clock)
            return f"{what} did not return within {self.detail}."
        if self.kind == "timeout":
            return f"{what} did not return within {self.detail or f'{limit:g} s'}: look for a loop that never ends, or work that grows too fast."
        if self.kind == "bad_output":
            return f"what {what} returned could not be read back: {self.detail}."
        if self.kind == "memory":
            return f"{what} used more than the {self.detail} of memory the grader allows and was stopped: look for an array far too large."
        if what.startswith("importing "):
            return _how(self.status)
        if self.status is not None and 0 <= self.status < 256:
            return f"{what} ended the Python process ({_how(self.status)}) instead of returning: remove that call and return the result."
        if self.status == -getattr(signal, "SIGKILL", 9):
            return f"{what} was stopped ({_how(self.status)}): look for an array far too large."
        return f"{what} crashed the Python process ({_how(self.status)}): look for ctypes, os or signal tricks."


def _how(status) -> str:
    """How the worker ended, from its exit status (negative: the signal that ended it, POSIX)."""
    if status is None:
        return "it stopped without answering"
    if status in WINDOWS_CRASHES:
        return WINDOWS_CRASHES[status]
    if status >= 0:
        return f"exit status {status}, as os._exit does"
    number = -status
    names = {
        getattr(signal, name, None): words
        for name, words in (
            ("SIGSEGV", "segmentation fault"),
            ("SIGKILL", "killed, most likely for using far too much memory"),
            ("SIGXCPU", "out of CPU time"),
            ("SIGBUS", "bus error"),
        )
    }
    if number in names:
        return names[number]
    return signal.Signals(number).name if number in signal.valid_signals() else f"signal {number}"


class SubmissionError(Exception):
    """The submission folder cannot be graded; the message says why and what to do."""


class NotRegular(Exception):
    """A module that is not a regular file (a symbolic link, a folder, a device); the message says which."""


class HelperFailed(Exception):
    """The helper gave no answer: it died, ran past its deadline or over its memory."""


class IsolationError(Exception):
    """The isolation asked for cannot be had on this machine; the message says why."""


class AskRefused(ValueError):
    """An ask outside its function's contract or over its budget; the message is for the student."""
