"""`python -m grader.student.foreground FOLDER MODULE FUNCTION GIVEN ANSWER`: one call of the student's function, for `grader try`.

Started attached to the student's terminal, so print() shows and breakpoint() stops here. The call's
arguments come from the file GIVEN; its value and arguments after go to the file ANSWER. Exit status 4:
the function is a stub (NotImplementedError); 3: it raised, and what it raised is printed.
"""

import importlib
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
    args = decode(Path(given).read_bytes(), live=True)
    try:
        value = getattr(importlib.import_module(f"{PACKAGE}.{module}"), function)(*args)
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


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
