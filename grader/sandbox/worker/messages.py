"""In the worker: what went wrong in the student's code, in words for the student."""

import traceback
from pathlib import Path

from grader.sandbox.worker.imports import refused
from grader.sandbox.worker.limits import MEMORY_BYTES


def not_written(function: str) -> str:
    """What a call of a function that still raises NotImplementedError says."""
    return f"{function} is not written yet: it still raises NotImplementedError."


def import_failure(module, error, folder) -> str:
    """Why a student module cannot be imported, for the student."""
    if said := refusal(
        error,
        folder,
        f"your {module}.py imports the reference solutions; the grader does not grade it. Write the functions yourself.",
    ):
        return said
    if isinstance(error, SyntaxError):
        broken = Path(error.filename or f"{module}.py").name
        whose = (
            "" if broken == f"{module}.py" else f"{broken}, which it imports, has a syntax error: "
        )
        there = "" if not whose else f" in {broken}"
        return f"your {module}.py cannot be imported: {whose}{error.msg} ({broken}, line {error.lineno}). Fix the syntax{there} and save."
    if isinstance(error, SystemExit):
        return f"your {module}.py called sys.exit while being imported {where(error, folder)}: remove that call."
    return f"your {module}.py cannot be imported: {type(error).__name__}: {text(error)} {where(error, folder)}."


def failed_in(module, error, folder) -> str:
    """The student's module whose file an import's error is in: a syntax error's file, else the last of theirs in the traceback."""
    if isinstance(error, SyntaxError):
        return Path(error.filename or f"{module}.py").stem
    try:
        frames = [
            f
            for f in traceback.extract_tb(error.__traceback__)
            if Path(f.filename).parent == folder
        ]
    except BaseException:
        return module
    return Path(frames[-1].filename).stem if frames else module


def call_failure(function, error, folder) -> str:
    """What went wrong in a call, for the student."""
    place = where(error, folder)
    if isinstance(error, SystemExit):
        return f"{function} called sys.exit() {place} instead of returning: remove that call and return the result."
    if isinstance(error, RecursionError):
        return f"{function} recursed without end (RecursionError) {place}: look for a function that calls itself."
    if isinstance(error, MemoryError):
        return f"{function} ran out of memory {place}: the grader allows {MEMORY_BYTES >> 30} GiB; look for an array far too large."
    if isinstance(error, KeyboardInterrupt):
        return f"{function} raised KeyboardInterrupt {place}: nobody pressed Ctrl-C, so remove that raise."
    if type(error).__name__ in (
        "NoTerminal",
        "BdbQuit",
    ):  # breakpoint() (or pdb) with no terminal to stop at
        return (
            f"{function} stopped at a breakpoint() {place}, which stops only when `grader try` runs your own exercises/: "
            "the checks, and a folder tried with --submission, run your code without a terminal. "
            "Remove it, or run `grader try` on your exercises/ to stop there."
        )
    return f"{function} raised {type(error).__name__}: {text(error)} {place}."


def call_refusal(function, error, folder) -> str | None:
    """Why an import made in a call was refused, for the student; None if none was."""
    return refusal(error, folder, f"{function} imports the reference solutions; write it yourself.")


def refusal(error, folder, solutions: str) -> str | None:
    """Why an import was refused, for the student: the rule and where it was broken, or these words for the solutions; None if none was."""
    found = refused(error)
    if found is None:
        return None
    if str(found.name).partition(".")[0] == "solutions":
        return solutions
    return f"{text(found)} {where(error, folder)}".rstrip() + "."


def text(error) -> str:
    """An exception's message, even if its __str__ misbehaves."""
    try:
        return str(error)[:300]
    except BaseException:
        return "(its message could not be shown)"


def where(error, folder) -> str:
    """The last line of the student's own code in the traceback, as (file, line n: code)."""
    try:
        frames = [
            f
            for f in traceback.extract_tb(error.__traceback__)
            if Path(f.filename).parent == folder
        ]
    except BaseException:
        return ""
    if not frames:
        return ""
    last = frames[-1]
    code = f": {last.line.strip()}" if last.line else ""
    return f"({Path(last.filename).name}, line {last.lineno}{code})"
