"""The reference helper: a process of its own, under a memory limit and a deadline, that answers the stand-ins' asks.

The grader (and nbgrader's autograde, which runs the checks in its own process) never runs the
reference on what a worker sent: a checked ask (grader.sandbox.asks) crosses to this helper as the
worker's own frame, and the helper's answer crosses back to the worker as it is. One helper per
grading process, started on the first ask; a helper that dies or runs late is replaced on the next.
Frames are length-prefixed; values are the codec's JSON head and .npy bytes, never pickle.
"""

import atexit
import hashlib
import json
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import psutil

from grader.sandbox import launcher
from grader.sandbox.errors import HelperFailed
from grader.sandbox.pipes import Deadline, FramedPipe, PipeFailed
from grader.sandbox.tree import RUN_VAR
from grader.sandbox.worker.codec import MAX_FRAME, encode
from grader.sandbox.worker.frames import read_frame, write_frame

# the helper's address space: numpy's own and a few answers at the asks' budget
MEMORY_BYTES = 2 << 30
ASK_SECONDS = 10.0  # one answer's deadline, at most
START_SECONDS = 30.0
# answers kept for asks that come again, at most (a run's checks ask the same often; a few at full scale)
KEPT_BYTES = 8 << 20
ANSWER_CAP = 256 << 20  # bytes of one answer: a few times the largest the asks' budget allows
# one core, a small address space
THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
KIT = str(Path(__file__).resolve().parents[2])
BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); from grader.sandbox.helper import serve; serve()"
)


class Helper:
    """The grader's side: the helper process, started lazily, asked one question at a time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None
        self.pipe: FramedPipe | None = None
        self.watch_memory = False
        self.greeted = False  # whether the helper's first frame has been read
        self.kept: dict[
            bytes, bytes | bytearray
        ] = {}  # digest of a request and its frame -> the answer, until forget()
        self.kept_bytes = 0

    def answer(
        self, function, frame: bytes, seconds: float = ASK_SECONDS, start: bool = True
    ) -> bytes | bytearray | None:
        """The encoded answer of function (a module-level reference function) to an ask frame; raises HelperFailed.

        The reference is a pure function of the ask, so an ask that came before is answered as it was then.
        start False: None when the helper process is not running (it would die with this thread, see start_soon).
        """
        request = json.dumps(
            {"module": function.__module__, "function": function.__qualname__}
        ).encode()
        key = hashlib.blake2b(request + b"\0" + frame, digest_size=20).digest()
        if (kept := self.kept.get(key)) is not None:
            return kept
        answer = self._asked(request, frame, seconds, start)
        if answer is None:
            return None
        if self.kept_bytes + len(answer) <= KEPT_BYTES:
            self.kept[key], self.kept_bytes = answer, self.kept_bytes + len(answer)
        return answer

    def forget(self) -> None:
        """Drop the answers kept (at the end of a run: a process that grades many keeps none)."""
        self.kept, self.kept_bytes = {}, 0

    def start_soon(self) -> None:
        """Start the helper now without waiting for it, so the first ask finds it ready; from the thread that will ask.

        The helper dies with the thread that started it (PR_SET_PDEATHSIG), so not from a thread of its own.
        """
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self._spawn()

    def _asked(
        self, request: bytes, frame: bytes, seconds: float, start: bool
    ) -> bytes | bytearray | None:
        """The helper process's answer to one ask; None when it is not running and start is False."""
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                if not start:
                    return None
                self._spawn()
            try:
                if not self.greeted:
                    self._greet()
                assert self.pipe is not None
                if not (self.pipe.write(request) and self.pipe.write(frame)):
                    raise HelperFailed("it ended")
                return self._receive(min(seconds, ASK_SECONDS))
            except HelperFailed as failure:
                self.stop()
                raise HelperFailed(str(failure)) from None

    def _spawn(self):
        """A fresh helper process, loading while the grader goes on."""
        self.stop()
        self.greeted = False
        self.process = launcher.piped(
            launcher.python("-c", BOOT, KIT), env=_environment(), stderr=False
        )
        self.pipe = FramedPipe(self.process, ANSWER_CAP, "reference-helper")

    def _greet(self):
        """The helper's first frame, once it has loaded: whether its memory limit is set."""
        try:
            ready = json.loads(self._receive(START_SECONDS))
            self.watch_memory, self.greeted = ready.get("limited") is not True, True
        except (ValueError, AttributeError) as error:  # not the JSON object serve writes first
            raise HelperFailed(f"its first frame was not its greeting ({error})") from None

    def _receive(self, seconds: float) -> bytearray:
        """The helper's next frame within seconds, watching its memory where the OS set no limit."""
        assert self.pipe is not None
        try:
            return self.pipe.receive(Deadline(seconds), idle=self._check_memory)
        except PipeFailed as failed:
            why = {
                "timeout": f"it did not answer within {seconds:g} s",
                "too_big": f"it sent a frame of {failed.size} bytes",
            }
            raise HelperFailed(why.get(failed.kind, "it ended")) from None

    def _check_memory(self):
        if self.watch_memory and self.process and _memory(self.process.pid) > MEMORY_BYTES:
            raise HelperFailed(f"it used more than {MEMORY_BYTES >> 30} GiB")

    def stop(self):
        """End the helper process, if one runs."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            if self.pipe is not None:
                self.pipe.close()
            for pipe in (self.process.stdin, self.process.stdout):
                pipe.close()
            self.process = self.pipe = None


def _environment() -> dict[str, str]:
    """The helper's: the grader's, one BLAS thread, and no run's mark (it outlives the runs of a grading process; its
    process's own token ends it with that process)."""
    return {**{name: value for name, value in os.environ.items() if name != RUN_VAR}, **THREADS}


def _memory(pid: int) -> int:
    """Bytes the helper holds, by psutil's measure."""
    try:
        info = psutil.Process(pid).memory_info()
    except psutil.Error:
        return 0
    return getattr(info, "private", 0) or info.rss


HELPER = Helper()
atexit.register(HELPER.stop)


def serve():
    """In the helper: set the memory limit, then answer each (function, ask) pair until the grader goes."""
    from grader.sandbox.worker.limits import watch_parent

    watch_parent(os.getppid())
    limited = _limit_memory()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    write_frame(replies, json.dumps({"limited": limited}).encode())
    while (request := read_frame(requests, MAX_FRAME)) is not None and (
        frame := read_frame(requests, MAX_FRAME)
    ) is not None:
        write_frame(replies, _answered(request, frame))


def _answered(request: bytes, frame: bytes) -> bytes:
    """The encoded answer to one ask; whatever the ask holds, an answer, never the helper's end."""
    try:
        return encode(_run(json.loads(request), frame))
    except MemoryError:
        return encode(
            {
                "error": "ValueError",
                "message": "the grader's reference ran out of memory on these arguments",
            }
        )
    except Exception as error:  # noqa: BLE001  (an ask the grader's checks let through and the reference cannot read)
        return encode(
            {
                "error": "ValueError",
                "message": f"the grader's reference could not read this ask ({type(error).__name__})",
            }
        )


def _run(request: dict, frame: bytes) -> dict:
    """The reference's value and arguments afterwards, or the error it raised, as the stand-in expects."""
    import importlib

    from grader.sandbox.worker.codec import as_sent, decode, sent_back

    message = decode(frame)
    function = getattr(importlib.import_module(request["module"]), request["function"])
    name, args = message["ask"], message["args"]
    # the stand-in keeps its own large arrays that come back unchanged (None here)
    copies = as_sent(args)
    try:
        with warnings.catch_warnings(), _quiet():
            warnings.simplefilter("ignore")
            value = function(*args)
    except MemoryError:
        return {
            "error": "ValueError",
            "message": f"{name}: the grader's reference ran out of memory on these arguments",
        }
    except Exception as error:  # the student passed something the reference cannot take
        return {"error": type(error).__name__, "message": f"{name}: {str(error)[:300]}"}
    return {"value": value, "args": sent_back(args, copies)[0]}


def _quiet():
    import numpy as np

    return np.errstate(all="ignore")


def _limit_memory() -> bool:
    """Set RLIMIT_AS where the OS lets us; whether it is set."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        return False
    return True
