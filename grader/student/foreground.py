"""`python -m grader.student.foreground FOLDER MODULE FUNCTION GIVEN ANSWER`: one call of the student's function, for `grader try`.

Started attached to the student's terminal, so print() shows and breakpoint() stops here. The file GIVEN
holds two sets of arguments: the first for a quiet call (nothing printed, no breakpoint), as the checks
call a function many times in one process, then the call shown; its value and arguments after go to the file ANSWER. Exit status 4:
the function is a stub (NotImplementedError); 3: it raised, and what it raised is printed.
"""

import contextlib
import importlib
import io
import sys
import traceback
from pathlib import Path

from grader.sandbox.worker.codec import PACKAGE, decode, encode
from grader.sandbox.worker.imports import install
from grader.sandbox.worker.messages import call_refusal
from grader.sandbox.worker.session import load_package

NOT_STARTED, RAISED = 4, 3  # exit statuses trying.py tells apart


def main(folder: str, module: str, function: str, given: str, answer: str) -> int:
    load_package(PACKAGE, Path(folder))
    install()  # the worker's import rule, so what `grader check` refuses is refused here too
    first, args = decode(Path(given).read_bytes(), live=True)
    try:
        target = getattr(importlib.import_module(f"{PACKAGE}.{module}"), function)
        quietly(target, first)
        value = target(*args)
    except NotImplementedError:
        return NOT_STARTED
    except BaseException as error:
        if said := call_refusal(function, error, Path(folder)):
            print(said, file=sys.stderr)
        else:
            traceback.print_exc()
        return RAISED
    Path(answer).write_bytes(encode({"value": value, "args": args}))
    return 0


def quietly(target, args) -> None:
    """The first call: its prints dropped, a breakpoint() passed over, whatever it raises ignored (the call shown is judged)."""
    hook, sys.breakpointhook = sys.breakpointhook, lambda *_, **__: None
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            target(*args)
    except Exception:  # noqa: BLE001, S110  (the call shown says what goes wrong)
        pass
    finally:
        sys.breakpointhook = hook


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
