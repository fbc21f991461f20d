"""The parent's side: a submission folder, graded call by call in a worker process that the parent can kill."""

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.paths import MODULES
from grader.sandbox import process
from grader.sandbox.codec import MAX_WARNINGS, WARNING_CHARS, decode, encode
from grader.sandbox.errors import StudentError, _Failed
from grader.sandbox.guard import refusals


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



class Student:
    """A submission folder, graded call by call in a worker process that the parent can kill.

    reference_for names functions ("softmax.softmax") that the worker replaces by the reference
    wherever the student's package binds them; a module holding such a function that cannot be
    imported is replaced by the reference module. The worker dies with the thread that started
    it (PR_SET_PDEATHSIG), so use a Student from the thread that created it, or one that outlives it.
    """

    def __init__(self, folder: Path, *, reference_for: Collection[str] = (), timeout: float = 10.0):
        self.folder = Path(folder).resolve()
        self.reference_for = tuple(reference_for)
        for qualified in self.reference_for:
            module, _, function = qualified.partition(".")
            if module not in MODULES or not function:
                raise ValueError(f"reference_for names module.function, got {qualified!r}")
        self.timeout = timeout
        self._refused = refusals(self.folder)
        self._broken: dict[str, StudentError] = {}  # modules that cannot be imported
        self._imported: set[str] = set()
        self._worker: process._Worker | None = None

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

    def call(self, module: str, function: str, *args, timeout: float | None = None) -> Outcome:
        """Call module.function(*args) in the worker; raises StudentError unless it returns."""
        limit = self.timeout if timeout is None else timeout
        if module in self._refused:
            raise StudentError("refused", f"{self._refused[module]}; the grader does not grade it. Write the functions yourself.")
        if module in self._broken:
            raise self._broken[module]
        if module not in self._imported:
            self._import(module, limit)
        reply = self._exchange({"op": "call", "module": module, "function": function, "args": args}, limit, function)
        if "error" in reply:
            raise StudentError(reply["error"], reply["message"], reply["output"])
        return Outcome(reply["value"], reply["args"], reply["seconds"], reply["output"], reply["warnings"])

    def _import(self, module, limit):
        """Import the module in the worker, remembering a failure for the calls that follow."""
        try:
            reply = self._exchange({"op": "import", "module": module}, limit, f"importing {module}.py")
        except StudentError as error:
            if error.kind == "timeout":
                error = StudentError("import", f"importing your {module}.py did not finish within {limit:g} s: look for a loop at module level.", error.output)
            elif error.kind == "crashed":
                error = StudentError("import", f"your {module}.py ended the Python process while being imported ({error.message}): remove the module-level code that does it.", error.output)
            self._broken[module] = error
            raise error from None
        if "error" in reply:
            self._broken[module] = StudentError(reply["error"], reply["message"], reply["output"])
            raise self._broken[module]
        self._imported.add(module)

    def _exchange(self, message, limit, what):
        """Send one request and wait for its reply, enforcing the limit; a dead worker becomes a StudentError."""
        if self._worker is None:
            self._worker = process._Worker(self.folder, self.reference_for)
            self._imported.clear()
        worker = self._worker
        try:
            reply = worker.exchange(encode(message), limit)
        except _Failed as failure:
            output = worker.output()
            worker.stop()
            self._worker = None
            raise StudentError(failure.kind, failure.describe(what, limit), output) from None
        try:
            reply = _checked(decode(reply), message["op"])
        except Exception as error:
            output = worker.output()
            worker.stop()
            self._worker = None
            raise StudentError("bad_output", f"what {what} returned could not be read back ({error}).", output) from None
        reply["output"] = worker.output()
        return reply


def _checked(reply, op):
    """The worker's reply if it has the shape the protocol promises; the worker runs student code."""
    if type(reply) is not dict:
        raise ValueError("the reply is not a dict")
    if "error" in reply:
        if reply["error"] not in StudentError.KINDS or type(reply.get("message")) is not str:
            raise ValueError("an error reply without a known kind and a message")
    elif "value" not in reply or op == "call" and not (type(reply.get("args")) is tuple and type(reply.get("seconds")) is float):
        raise ValueError("a reply without value, args and seconds")
    elif op == "call":
        caught = reply.get("warnings")
        if type(caught) is not tuple or not all(type(line) is str for line in caught):
            raise ValueError("a reply whose warnings are not a tuple of str")
        reply["warnings"] = tuple(line[:WARNING_CHARS] for line in caught[:MAX_WARNINGS])
    return reply

