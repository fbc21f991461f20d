"""The worker process: imports the student's folder and runs one requested call at a time.

Started by grader/sandbox/worker/boot.py; requests arrive on stdin and replies leave on stdout
(see grader.sandbox.worker.channel), so whatever the student prints goes to the captured output only.
"""

import builtins
import sys
import time
import warnings

import numpy as np

from grader.sandbox.worker.channel import Channel
from grader.sandbox.worker.codec import (
    MAX_FRAME,
    MAX_WARNINGS,
    WARNING_CHARS,
    Foreign,
    array_bytes,
    as_sent,
    describe,
    encode,
    sent_back,
)
from grader.sandbox.worker.imports import install, refused
from grader.sandbox.worker.limits import end_leftovers, limit_resources, watch_parent
from grader.sandbox.worker.messages import (
    call_failure,
    call_refusal,
    failed_in,
    import_failure,
    not_written,
    text,
)
from grader.sandbox.worker.session import Session

# numpy's defaults, before any student code: warn on overflow, 0/0 and x/0
NUMPY_ERRORS = np.geterr()


class NoTerminal(Exception):
    """breakpoint() in a worker, which has no terminal to stop at: raised where it was called."""


def no_terminal(*args, **kwargs):
    """sys.breakpointhook in the worker: the message then names the breakpoint() line itself."""
    raise NoTerminal("breakpoint() needs a terminal")


def main(landlocked: bool = False):
    """Serve requests until the grader closes the pipe; landlocked says whether Landlock confines this process."""
    channel = Channel()
    session, sweep = None, False
    install()  # before pristine: the guarded __import__ is what each request gets back
    sys.breakpointhook = no_terminal
    # restored after each request, so the worker's own code keeps working
    pristine = dict(vars(builtins))
    while (message := channel.read()) is not None:
        if message["op"] == "hello":  # the isolation probe's question: Python and numpy run here
            channel.end_of_call()
            channel.write(encode({"hello": True}))
            continue
        if message["op"] == "init":
            unlimited, sweep = (
                limit_resources(message["limits"]),
                message["limits"].get("sweep", False),
            )
            watch_parent(message["parent"], death_signal=not message["limits"].get("simulate"))
            session = Session(message["folder"], message["reference_for"], channel.ask)
            channel.end_of_call()
            channel.write(encode({"ready": True, "unlimited": unlimited, "landlocked": landlocked}))
            continue
        channel.calling = True
        reply = handle(session, message)
        channel.calling = False
        restore(pristine)
        sys.breakpointhook = no_terminal  # whatever the call set
        if sweep:
            end_leftovers()
        flush()
        channel.end_of_call()
        channel.write(encoded(reply, message.get("cap", MAX_FRAME)))


def handle(session, message):
    """Import a module or make a call; a dict with the value or the error."""
    module, op = message["module"], message["op"]
    try:
        loaded = session.import_module(module)
    except BaseException as error:  # whatever the student's module does at import
        said, where = (
            import_failure(module, error, session.folder),
            failed_in(module, error, session.folder),
        )
        return {
            "error": "refused" if refused(error) else "import",
            "message": said,
            "module": where,
        }
    if op == "import":
        return {"value": None}
    function = message["function"]
    target = getattr(loaded, function, None)
    if not callable(target):
        return {
            "error": "import",
            "message": f"your {module}.py has no function {function}: keep the name and signature from the stub.",
        }
    args = message["args"]
    # the large arrays as they came, so that those the call leaves alone need not go back
    copies = as_sent(args)
    start = time.perf_counter()
    try:
        with RecordWarnings() as caught:
            value = target(*args)
    except NotImplementedError:
        return {"error": "not_started", "message": not_written(function)}
    except BaseException as error:  # the parent alone decides what a failure means
        if said := call_refusal(function, error, session.folder):
            return {"error": "refused", "message": said}
        return {"error": "raised", "message": call_failure(function, error, session.folder)}
    seconds = time.perf_counter() - start
    back, same = sent_back(args, copies)
    return {
        "value": value,
        "args": back,
        "same": same,
        "seconds": seconds,
        "warnings": summary(caught),
    }


class RecordWarnings(warnings.catch_warnings):
    """Records every warning of a call, under numpy's default error handling and the filter "always".

    What a student module set at import (np.seterr, warnings.filterwarnings) is undone for each call,
    so it cannot change the verdict of another module's calls; what a call sets for itself is its choice.
    """

    def __init__(self):
        super().__init__(record=True)

    def __enter__(self):
        np.seterr(**NUMPY_ERRORS)
        np.seterrcall(None)
        caught = super().__enter__()
        warnings.resetwarnings()
        warnings.simplefilter("always")
        return caught


def summary(caught) -> tuple[str, ...]:
    """The first recorded warnings as "Category: message", each cut short."""
    lines = []
    for record in caught[:MAX_WARNINGS]:
        name = getattr(record.category, "__name__", "Warning")
        lines.append(f"{name}: {text(record.message)}"[:WARNING_CHARS])
    return tuple(lines)


def encoded(reply, cap: int) -> bytes:
    """The reply as a message; a value or argument that cannot be sent goes as a Foreign."""
    if (size := array_bytes(reply)) > cap:
        return too_big(size, cap)
    try:
        data = encode(reply)
    except BaseException:  # e.g. a list that contains itself
        try:
            shielded = {
                **reply,
                "value": shield(reply.get("value")),
                "args": tuple(shield(a) for a in reply.get("args", ())),
            }
            data = encode(shielded)
        except BaseException as error:
            return encode(
                {
                    "error": "bad_output",
                    "message": f"the value returned could not be sent to the grader ({type(error).__name__}).",
                }
            )
    return too_big(len(data), cap) if len(data) > cap else data


def too_big(size: int, cap: int) -> bytes:
    """The error reply for a value far larger than the call should return."""
    shown = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size} bytes"
    return encode(
        {
            "error": "bad_output",
            "message": f"the value returned is {shown}, far more than this call should return "
            f"(the grader takes up to {cap >> 20} MiB here): return only what the docstring asks for.",
        }
    )


def shield(value):
    """The value if it can be sent, else a Foreign saying why not."""
    try:
        encode(value)
        return value
    except BaseException as error:
        type_name, text = describe(value)
        return Foreign(type_name, f"{text[:200]} ({error})")


def restore(pristine):
    """Put back any builtin the student's code replaced or removed."""
    namespace = vars(builtins)
    for name, value in pristine.items():
        if namespace.get(name) is not value:
            namespace[name] = value


def flush():
    """Push the student's buffered prints into the output pipe."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:  # a replaced stream may do anything
            pass
