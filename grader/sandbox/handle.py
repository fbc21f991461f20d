"""The parent's side: a submission folder, graded call by call in a worker process that the parent can kill.

The worker never holds reference code. Where an exercise is graded with the reference versions of
earlier ones, the worker's stand-ins ask, and this side answers with the functions it was given.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grader.paths import MODULES
from grader.sandbox import asks, isolation
from grader.sandbox.errors import AskRefused, StudentError, _Failed
from grader.sandbox.guard import refusals
from grader.sandbox.helper import HELPER, HelperFailed
from grader.sandbox.process import GRADER_FAULT, WorkerProcess
from grader.sandbox.worker.codec import (
    MAX_WARNINGS,
    WARNING_CHARS,
    Batches,
    array_bytes,
    decode,
    encode,
    may_be_ask,
)
from grader.sandbox.worker.toymodel import TAKEN

# what a worker may say went wrong
WORKER_KINDS = ("not_started", "raised", "import", "bad_output", "refused")
REPLY_BASE = 4 << 20  # bytes a reply may have beyond REPLY_FACTOR times its request
REPLY_FACTOR = 16  # times the request's arrays' bytes


@dataclass
class Outcome:
    """A call that returned: its value, its arguments afterwards, its time, its printed output and warnings.

    warnings: "Category: message" of each warning the call gave (numpy's default error handling,
    every warning recorded, not only the first of its kind), at most MAX_WARNINGS.
    """

    value: Any
    args: tuple
    seconds: float
    output: str = ""
    warnings: tuple[str, ...] = ()


class StudentCode:
    """A submission folder, graded call by call in a confined worker process.

    reference maps qualified names ("softmax.softmax") to the functions that stand for them: the
    worker binds a stand-in wherever the student's package binds the name, and this side runs the
    function. Only the five modules are copied for the worker, as they are when it starts.
    """

    def __init__(
        self,
        folder: Path,
        *,
        reference: Mapping[str, Callable] | None = None,
        timeout: float = 10.0,
    ):
        self.folder = Path(folder).resolve()
        self.reference = dict(reference or {})
        for qualified in self.reference:
            module, _, function = qualified.partition(".")
            if module not in MODULES or not function:
                raise ValueError(f"reference names module.function, got {qualified!r}")
        self.timeout = timeout
        self.isolation = None  # the tier of the last worker started
        self._refused = refusals(self.folder)
        self._broken: dict[str, StudentError] = {}  # modules that cannot be imported
        self._imported: set[str] = set()
        self._worker: WorkerProcess | None = None
        self._refusals: list[str] = []  # the asks of the current call refused by their contract
        self._pairs: list = []  # the (x, y) pairs of the current call's Batches argument, handed out one by one
        self._taken = 0  # how many of them the worker has been given

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Stop the worker and every process it started."""
        if self._worker is not None:
            self._worker.stop()
        self._worker = None
        self._imported.clear()

    def start(self) -> None:
        """Start the worker now instead of at the first call; a worker that cannot start says so at that call."""
        if self._worker is None:
            try:
                self._worker = self._start()
            except StudentError:
                pass

    def call(self, module: str, function: str, *args, timeout: float | None = None) -> Outcome:
        """Call module.function(*args) in the worker; raises StudentError unless it returns."""
        limit = self.timeout if timeout is None else timeout
        if module in self._refused:
            raise StudentError("refused", self._refused[module])
        if module in self._broken:
            raise self._broken[module]
        if module not in self._imported:
            self._import(module, limit)
        feeds = [arg for arg in args if type(arg) is Batches and not arg.sent]
        # kept here: the worker asks for each pair (grader.sandbox.worker.toymodel.TAKEN)
        self._pairs = feeds[0].pairs if feeds else []
        request = tuple(
            Batches([]) if type(arg) is Batches and not arg.sent else arg for arg in args
        )
        reply = self._exchange(
            {"op": "call", "module": module, "function": function, "args": request}, limit, function
        )
        if "error" in reply:
            raise _failure(reply)
        returned = tuple(
            _as_sent(args, i) if i in reply["same"] else back
            for i, back in enumerate(reply["args"])
        )
        after = tuple(
            _counted(back, args[i] if i < len(args) else None, self._pairs, self._taken)
            for i, back in enumerate(returned)
        )
        return Outcome(reply["value"], after, reply["seconds"], reply["output"], reply["warnings"])

    def _import(self, module, limit):
        """Import the module in the worker, remembering a failure for the calls that follow."""
        try:
            reply = self._exchange(
                {"op": "import", "module": module}, limit, f"importing {module}.py"
            )
        except StudentError as error:
            if error.kind == "timeout":
                error = StudentError(
                    "import",
                    f"importing your {module}.py did not finish within {limit:g} s: look for a loop at module level.",
                    error.output,
                )
            elif error.kind in ("crashed", "memory"):
                error = StudentError(
                    "import",
                    f"your {module}.py ended the Python process while being imported ({error.message}): remove the module-level code that does it.",
                    error.output,
                )
            if error.kind != "grader":
                self._broken[module] = error
            raise error from None
        if "error" in reply:
            self._broken[module] = _failure(reply)
            raise self._broken[module]
        self._imported.add(module)

    def _start(self) -> WorkerProcess:
        """A fresh worker, confined as well as this machine allows."""
        try:
            worker = WorkerProcess(isolation.choose(), self.folder)
        except isolation.IsolationError as error:
            raise StudentError(
                "grader", f"The grader cannot run your code: {error} {GRADER_FAULT}"
            ) from None
        except OSError as error:
            raise StudentError(
                "grader", f"The grader could not start its worker process ({error}). {GRADER_FAULT}"
            ) from None
        worker.start(self.reference)
        confinement = worker.confinement
        if (
            confinement.name.endswith("landlock") and not worker.landlocked
        ):  # the tier recorded must be the one it had
            worker.stop()
            raise StudentError(
                "grader",
                f"The grader could not apply Landlock to its worker process. {GRADER_FAULT}",
            )
        self.isolation = confinement.name
        self._imported.clear()
        return worker

    def _exchange(self, message, limit, what):
        """Send one request and wait for its reply, answering stand-ins on the way; a dead worker becomes a StudentError."""
        if self._worker is None:
            self._worker = self._start()
        worker, replies, self._refusals, self._taken = self._worker, [], [], 0
        request = encode(
            {**message, "cap": (cap := REPLY_BASE + REPLY_FACTOR * array_bytes(message))}
        )
        try:
            worker.exchange(
                request, limit, cap, lambda frame: self._answer(frame, replies), quick=self._quick
            )
            reply = _checked(replies[0], message["op"])
        except (
            BaseException
        ) as failure:  # the worker may be a frame out of step now: it goes, whatever went wrong
            output = worker.output.take()
            worker.stop()
            self._worker = None
            if not isinstance(failure, Exception):  # Ctrl-C
                raise
            raise _student_error(failure, what, limit, output) from None
        reply["output"] = worker.output.take()
        if (
            self._refusals
        ):  # caught by the student's code or not, an ask outside its contract fails the call
            raise StudentError("raised", f"your {what} called {self._refusals[0]}", reply["output"])
        return reply

    def _answer(self, frame: bytes, replies: list):
        """A frame the worker's reader left to the exchange: an ask answered here (bytes to send), or the final reply kept (None)."""
        if (message := _ask_in(frame)) is None:
            replies.append(decode(frame))
            return None
        return self._ask_answered(message, frame, start=True)

    def _quick(self, frame: bytes) -> bytes | bytearray | None:
        """On the worker's reader thread, while the call waits: the answer to an ask, sent from there (one thread hop each
        way instead of three, for asks made by the thousand); None leaves the frame to the exchange's thread: a reply, or
        an ask whose helper is not running yet (the helper dies with the thread that starts it, so only that one may).
        """
        if not may_be_ask(frame):  # a reply, left to the exchange's thread to decode
            return None
        try:
            message = _ask_in(frame)
        except ValueError:
            return None
        return None if message is None else self._ask_answered(message, frame, start=False)

    def _ask_answered(self, message: dict, frame: bytes, start: bool) -> bytes | bytearray | None:
        """The answer to a stand-in's question: the next batch, or the reference helper's; None when start is False and no helper runs."""
        name, args = message.get("ask"), message.get("args")
        if (
            name == TAKEN
        ):  # the next batch of a Batches argument, handed out and counted here, where student code cannot change it
            pair = self._pairs[self._taken] if self._taken < len(self._pairs) else None
            self._taken += pair is not None
            return encode({"value": pair, "args": ()})
        if name not in self.reference:
            raise ValueError(
                f"the worker asked for {str(name)[:80]!r}, which it has no stand-in for"
            )
        try:
            asks.check(name, args)
        except Exception as error:  # noqa: BLE001  (arguments no contract can even judge are refused too)
            refused = (
                error
                if isinstance(error, AskRefused)
                else f"its arguments could not be checked ({type(error).__name__})"
            )
            self._refusals.append(f"{name.partition('.')[2]}: {refused}")
            return encode({"error": "ValueError", "message": f"{name}: {refused}"})
        try:
            return HELPER.answer(self.reference[name], frame, start=start)
        except HelperFailed as failure:
            raise StudentError(
                "grader",
                f"The grader's reference could not answer {name} ({failure}). {GRADER_FAULT}",
            ) from None


def _ask_in(frame: bytes) -> dict | None:
    """The stand-in's question a frame holds, its arrays left unread; None for any other frame (a reply).

    ValueError for a frame that is no message, or an ask that holds more than a name and its arguments.
    """
    message = decode(frame, outline=True)
    if type(message) is not dict or "ask" not in message:
        return None
    if set(message) != {"ask", "args"} or type(message["ask"]) is not str:
        raise ValueError("an ask that is not a function's name and its arguments")
    return message


def _student_error(failure: Exception, what: str, limit: float, output: str) -> StudentError:
    """An exchange that failed, as the student's call failing: the worker's frames decide how an exchange goes."""
    if isinstance(failure, StudentError):
        return StudentError(failure.kind, failure.message, output)
    if isinstance(failure, _Failed):
        return StudentError(failure.kind, failure.describe(what, limit), output)
    if isinstance(failure, ValueError):
        return StudentError(
            "bad_output", f"what {what} returned could not be read back ({failure}).", output
        )
    return StudentError(
        "bad_output",
        f"what {what} sent the grader could not be read ({type(failure).__name__}).",
        output,
    )


def _as_sent(args: tuple, i: int):
    """A copy of the array sent as argument i, which the worker says the call left as it came (None if it was no array)."""
    return args[i].copy() if i < len(args) and type(args[i]) is np.ndarray else None


def _counted(back, given, pairs: list, taken: int):
    """An argument as the worker gave it back, a Batches with its pairs and count: the grader's count, or the worker's
    for pairs sent along with the call."""
    if type(given) is Batches and given.sent:
        return Batches(given.pairs, back.taken if type(back) is Batches else 0, sent=True)
    return Batches(pairs, taken) if type(back) is Batches else back


def _failure(reply: dict) -> StudentError:
    """The StudentError an error reply stands for; an import's names the module whose file the error is in."""
    module = reply.get("module")
    return StudentError(
        reply["error"], reply["message"], reply["output"], module if module in MODULES else ""
    )


def _checked(reply, op):
    """The worker's reply if it has the shape the protocol promises; the worker runs student code."""
    if type(reply) is not dict:
        raise ValueError("the reply is not a dict")
    if "error" in reply:
        if reply["error"] not in WORKER_KINDS or type(reply.get("message")) is not str:
            raise ValueError("an error reply without a known kind and a message")
    elif (
        "value" not in reply
        or op == "call"
        and not (type(reply.get("args")) is tuple and type(reply.get("seconds")) is float)
    ):
        raise ValueError("a reply without value, args and seconds")
    elif op == "call":
        same, back = reply.get("same"), reply["args"]
        if type(same) is not list or not all(
            type(i) is int and 0 <= i < len(back) and back[i] is None for i in same
        ):
            raise ValueError(
                "a reply whose unchanged arguments are not positions of arguments sent back as None"
            )
        caught = reply.get("warnings")
        if type(caught) is not tuple or not all(type(line) is str for line in caught):
            raise ValueError("a reply whose warnings are not a tuple of str")
        reply["warnings"] = tuple(line[:WARNING_CHARS] for line in caught[:MAX_WARNINGS])
    return reply
