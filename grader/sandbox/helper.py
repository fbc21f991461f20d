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
import queue
import struct
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import psutil

from grader.sandbox import launcher
from grader.sandbox.codec import encode
from grader.sandbox.errors import HelperFailed
from grader.sandbox.frames import read_exactly, write_frame

MEMORY_BYTES = 2 << 30  # the helper's address space: numpy's own and a few answers at the asks' budget
ASK_SECONDS = 10.0  # one answer's deadline, at most
START_SECONDS = 30.0
KEPT_BYTES = 8 << 20  # answers kept for asks that come again, at most (a run's checks ask the same often; a few at full scale)
POLL = 0.05  # seconds between looks at the helper's memory where RLIMIT_AS could not be set
THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}  # one core, a small address space
KIT = str(Path(__file__).resolve().parents[2])
BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from grader.sandbox.helper import serve; serve()"


class Helper:
    """The grader's side: the helper process, started lazily, asked one question at a time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None
        self.frames: queue.Queue = queue.Queue()
        self.watch_memory = False
        self.greeted = False  # whether the helper's first frame has been read
        self.kept: dict[bytes, bytes] = {}  # digest of a request and its frame -> the answer, until forget()
        self.kept_bytes = 0

    def answer(self, function, frame: bytes, seconds: float = ASK_SECONDS, start: bool = True) -> bytes | None:
        """The encoded answer of function (a module-level reference function) to an ask frame; raises HelperFailed.

        The reference is a pure function of the ask, so an ask that came before is answered as it was then.
        start False: None when the helper process is not running (it would die with this thread, see start_soon).
        """
        request = json.dumps({"module": function.__module__, "function": function.__qualname__}).encode()
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

    def _asked(self, request: bytes, frame: bytes, seconds: float, start: bool) -> bytes | None:
        """The helper process's answer to one ask; None when it is not running and start is False."""
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                if not start:
                    return None
                self._spawn()
            if not self.greeted:
                self._greet()
            try:
                self._send(request)
                self._send(frame)
                return self._receive(min(seconds, ASK_SECONDS))
            except (HelperFailed, OSError) as failure:
                self.stop()
                raise HelperFailed(str(failure)) from None

    def _spawn(self):
        """A fresh helper process, loading while the grader goes on."""
        self.frames, self.greeted = queue.Queue(), False
        self.process = launcher.piped(launcher.python("-c", BOOT, KIT), env={**os.environ, **THREADS}, stderr=False)
        threading.Thread(target=_read_frames, args=(self.process.stdout, self.frames), daemon=True, name="reference-helper").start()

    def _greet(self):
        """The helper's first frame, once it has loaded: whether its memory limit is set."""
        ready = json.loads(self._receive(START_SECONDS))
        self.watch_memory, self.greeted = not ready.get("limited"), True

    def _send(self, data: bytes):
        assert self.process is not None and self.process.stdin is not None
        write_frame(self.process.stdin, data)

    def _receive(self, seconds: float) -> bytes:
        """The helper's next frame within seconds, watching its memory where the OS set no limit."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                frame = self.frames.get(timeout=min(left, POLL))
            except queue.Empty:
                if self.watch_memory and self.process and _memory(self.process.pid) > MEMORY_BYTES:
                    raise HelperFailed(f"it used more than {MEMORY_BYTES >> 30} GiB") from None
                continue
            if frame is None:
                raise HelperFailed("it ended")
            return frame
        raise HelperFailed(f"it did not answer within {seconds:g} s")

    def stop(self):
        """End the helper process, if one runs."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for pipe in (self.process.stdin, self.process.stdout):
                pipe.close()
            self.process = None


def _read_frames(pipe, frames: queue.Queue):
    """Thread: the helper's frames, then None at its end."""
    while (head := read_exactly(pipe, 8)) is not None and (body := read_exactly(pipe, struct.unpack("<Q", head)[0])) is not None:
        frames.put(body)
    frames.put(None)


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
    from grader.sandbox.limits import watch_parent

    watch_parent(os.getppid())
    limited = _limit_memory()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    write_frame(replies, json.dumps({"limited": limited}).encode())
    while (head := read_exactly(requests, 8)) is not None:
        request = read_exactly(requests, struct.unpack("<Q", head)[0])
        size = read_exactly(requests, 8)
        frame = size and read_exactly(requests, struct.unpack("<Q", size)[0])
        if request is None or frame is None:
            return
        write_frame(replies, encode(_run(json.loads(request), frame)))


def _run(request: dict, frame: bytes) -> dict:
    """The reference's value and arguments afterwards, or the error it raised, as the stand-in expects."""
    import importlib

    from grader.sandbox.codec import as_sent, decode, sent_back

    message = decode(frame)
    function = getattr(importlib.import_module(request["module"]), request["function"])
    name, args = message["ask"], message["args"]
    copies = as_sent(args)  # the stand-in keeps its own large arrays that come back unchanged (None here)
    try:
        with warnings.catch_warnings(), _quiet():
            warnings.simplefilter("ignore")
            value = function(*args)
    except MemoryError:
        return {"error": "ValueError", "message": f"{name}: the grader's reference ran out of memory on these arguments"}
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
