"""Grading processes: `grader check` kept running, so that a batch pays Python's, numpy's and Hypothesis' start
once per process instead of once per submission, and keeps its reference helper and its confinement's probe.

Each request is one folder, graded exactly as `grader check --submission FOLDER --json RESULT` grades it in a
fresh process (nbgrader's autograde grades a class in one process the same way): the exit status and what
the check printed come back on a framed pipe. The student's code never runs here, only in the workers each
check starts and ends; whatever a submission left running carries its request's mark and is killed before
the result is read. A process that runs late, dies or sends what is not a reply is ended, and the next
request starts another.
"""

import contextlib
import io
import json
import os
import secrets
import sys
import threading
import time
import traceback
from pathlib import Path

from grader.paths import KIT_ROOT
from grader.sandbox import launcher
from grader.sandbox.pipes import Deadline, FramedPipe, PipeFailed
from grader.sandbox.tree import RUN_VAR, kill_marked
from grader.sandbox.worker.frames import read_frame, write_frame

REQUEST_CAP = 64 << 10  # bytes of a request: two paths
OUTPUT_KEPT = 64 << 10  # bytes of a check's output sent back, from its end
# requests one process grades before another takes over: what a run leaves in memory (caches of the checks'
# libraries) stays bounded however large the class
REQUESTS = 100
# the output as JSON escapes it (two \uXXXX for a character past U+FFFF), and the status
REPLY_CAP = OUTPUT_KEPT * 12 + 4096


class GradingProcess:
    """The batch's side of one grading process: started on the first request, replaced after a failed one."""

    def __init__(self, env: dict | None = None):
        self.env = {**(os.environ if env is None else env), "NO_COLOR": "1"}
        self.child: launcher.Child | None = None
        self.pipe: FramedPipe | None = None
        self.lock = threading.Lock()  # stop() from another thread never races a start
        self.stopped = False
        self.served = 0  # requests the running process has had

    def check(self, folder: Path, result: Path, timeout: float) -> tuple[int | None, str, bool]:
        """Grade a folder into its result file: (exit status, output, timed out), as a fresh `grader check` would give.

        The exit status is None when the process ended without a reply (its output then says what it left), or
        when stop() came first.
        """
        with self.lock:
            if self.stopped:
                return None, "", False
            if self.child is not None and self.served >= REQUESTS:
                self.close()
            if self.child is None or self.child.ended:
                self._start()
            self.served += 1
            child, pipe = self.child, self.pipe
        assert child is not None and pipe is not None
        run, started = secrets.token_hex(8), time.time()
        pipe.send(json.dumps({"folder": str(folder), "json": str(result), "run": run}).encode())
        try:
            reply = json.loads(pipe.receive(Deadline(timeout)))
            code, output = int(reply["code"]), str(reply["output"])
        except PipeFailed as failure:
            child.end()
            return child.returncode, child.output(OUTPUT_KEPT), failure.kind == "timeout"
        except (ValueError, KeyError, TypeError):  # not a reply: the process is out of step
            child.end()
            return None, child.output(OUTPUT_KEPT), False
        finally:  # what the submission left running is killed before its result is read
            kill_marked(f"{RUN_VAR}={run}", started)
        return code, output, False

    def _start(self) -> None:
        command = launcher.module("grader.course.graders", root=KIT_ROOT)
        self.child = launcher.Child(command, env=self.env, output="frames", scratch=True)
        self.served = 0
        self.pipe = FramedPipe(self.child.process, REPLY_CAP, "grading")

    def stop(self) -> None:
        """End the process and all it started (a check running now with it), and start no other."""
        with self.lock:
            self.stopped = True
            if self.child is not None:
                self.child.end()

    def close(self) -> None:
        if self.pipe is not None:
            self.pipe.close()
        if self.child is not None:
            self.child.close()


def check_once(folder: Path, result: Path, timeout: float) -> tuple[int | None, str, bool]:
    """One folder graded by a grading process of its own (a Gradescope container grades one)."""
    grading = GradingProcess()
    try:
        return grading.check(folder, result, timeout)
    finally:
        grading.close()


def serve() -> None:
    """The grading process: one request at a time from stdin, each reply a frame on what was stdout.

    fd 1 then goes to stderr, so nothing printed outside a request can put the pipe out of step.
    """
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    while (frame := read_frame(requests, REQUEST_CAP)) is not None:
        request = json.loads(frame)
        os.environ[RUN_VAR] = request["run"]  # the workers of this request carry it
        code, output = _checked(Path(request["folder"]), Path(request["json"]))
        write_frame(replies, json.dumps({"code": code, "output": output[-OUTPUT_KEPT:]}).encode())


def _checked(folder: Path, result: Path) -> tuple[int, str]:
    """`grader check --submission FOLDER --json RESULT` in this process: its exit status and what it printed."""
    from grader.check.command import check

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        try:
            code = check(submission=folder, json_file=result)
        except KeyboardInterrupt:
            raise
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except BaseException:  # noqa: BLE001  (as a fresh process would end: its traceback and status 1)
            traceback.print_exc()
            code = 1
    return code, printed.getvalue()


if __name__ == "__main__":
    serve()
