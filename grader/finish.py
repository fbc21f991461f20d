"""The end of a grader process: once its work is done, exit without the interpreter's teardown."""

import atexit
import os
import sys
import threading


def finish(code) -> None:
    """Exit with code as sys.exit would, but without freeing every module's objects one by one.

    By now the output is written and every process the command started has ended; the teardown
    left frees numpy's and Hypothesis' objects, 50 ms of a `grader check` on a 2-core machine that
    nothing needs. The atexit functions still run (the reference helper is stopped there) and the
    streams are flushed. A thread still running (none should be) gets the ordinary exit, which waits for it.
    """
    code = 0 if code is None else code
    if not isinstance(code, int):  # sys.exit("message"): the message on stderr, status 1
        print(code, file=sys.stderr)
        code = 1
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate() if thread is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a closed pipe (`grader check | head`), or no stream at all
            pass
    os._exit(code)
