"""In the worker: the pipes to the grader, taken over before any student code runs.

The grader writes requests to the worker's stdin and reads replies from its stdout. At start the
worker keeps private copies of both and points fds 0 and 1 elsewhere (stdin at the null device,
stdout at stderr), so whatever the student prints reaches the output pipe only. Pipes, dup and
dup2 exist on every OS, so this works the same on Linux, macOS and Windows.
"""

import os
import sys
import threading

import numpy as np

from grader.sandbox.worker.codec import decode, encode
from grader.sandbox.worker.frames import END_OF_CALL, HEAD
from grader.sandbox.worker.toymodel import TAKEN, BatchFeed

ERRORS = {
    cls.__name__: cls
    for cls in (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, AttributeError)
}


class Channel:
    """Frames to and from the grader; a stand-in's question and its answer in between."""

    def __init__(self):
        self.requests, self.replies, self.output = os.dup(0), os.dup(1), os.dup(2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        self.lock = threading.Lock()
        self.calling = False  # stand-ins answer only during a call, from the thread that makes it
        BatchFeed.fetch = lambda: self.ask(TAKEN, ())

    def read(self):
        """The next request, or None when the grader has gone."""
        head = read_exactly(self.requests, HEAD.size)
        if head is None:
            return None
        body = read_exactly(self.requests, HEAD.unpack(head)[0])
        return None if body is None else decode(body, live=True)

    def write(self, data: bytes):
        """One length-prefixed frame to the grader."""
        for piece in (
            HEAD.pack(len(data)),
            data,
        ):  # two writes: joining them would copy a large reply once more
            view = memoryview(piece)
            while view:
                view = view[os.write(self.replies, view) :]

    def end_of_call(self):
        """Mark on the output pipe that this call's output is complete."""
        try:
            os.write(self.output, END_OF_CALL)
        except OSError:  # the student closed it: the grader stops waiting for the mark
            pass

    def ask(self, qualified: str, args: tuple):
        """What the reference function returns on these arguments, computed by the grader."""
        if not self.calling or threading.current_thread() is not threading.main_thread():
            raise RuntimeError(
                f"{qualified} can only be called while the grader is calling your function, from its thread"
            )
        with self.lock:
            self.write(encode({"ask": qualified, "args": args}))
            answer = self.read()
        if answer is None:
            sys.exit(0)  # the grader has gone
        if "error" in answer:
            raise ERRORS.get(answer["error"], RuntimeError)(answer["message"])
        for old, new in zip(args, answer["args"]):
            take_back(old, new)
        return answer["value"]


def take_back(old, new):
    """Give an argument the changes the reference made to its copy: dict entries rebound, arrays written.

    Nothing here compares values: the student's code may have patched numpy's comparisons.
    """
    if type(old) is dict and type(new) is dict:
        old.update(new)
    elif (
        type(old) is np.ndarray
        and type(new) is np.ndarray
        and old.shape == new.shape
        and old.flags.writeable
    ):
        np.copyto(old, new, casting="unsafe")


def read_exactly(fd, size) -> bytes | None:
    """Exactly size bytes from a blocking fd, or None at end of file."""
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, min(size - len(data), 1 << 20))
        if not chunk:
            return None
        data += chunk
    return bytes(data)
