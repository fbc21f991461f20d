"""Process control on every OS: start a worker, talk to it under a time limit, end it and all it started.

Threads read the worker's pipes (Windows cannot wait on pipes with select), and psutil looks at
processes (no /proc, pidfd or process group is needed). How the worker is confined, and how
everything it started is ended, is the confinement's business (grader.sandbox.isolation).
"""

import queue
import struct
import subprocess
import sys
import threading
import time

import psutil

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

from grader.sandbox import launcher
from grader.sandbox.clock import Clock, Sample, _tree
from grader.sandbox.codec import decode, encode
from grader.sandbox.errors import StudentError, _Failed
from grader.sandbox.frames import END_OF_CALL, read_exactly, write_frame
from grader.sandbox.limits import MEMORY_BYTES
from grader.sandbox.portable import simulating_other_os
from grader.sandbox.private import Room

STARTUP_SECONDS = 60.0  # starting a worker is the grader's cost, not the student's
STARTUP_CAP = 1 << 20  # bytes of the worker's first reply
PIPE_BYTES = 1 << 20  # the request and reply pipes' size, where it can be set
OUTPUT_KEPT = 16 << 10  # bytes of the student's output kept per call
OUTPUT_GRACE = 1.0  # seconds to wait for a call's output after its reply
POLL = 0.05  # seconds between looks at the worker while waiting
GRADER_FAULT = "This is a fault in the grader, not in your code: please report it, with this message, to your instructor."


class TooBig:
    """A frame whose announced size is over the cap of the exchange."""

    def __init__(self, size):
        self.size = size


GONE = object()  # the reply pipe was closed


class Raised:
    """An error of the exchange's quick answerer, on the reader's thread, for the exchange to raise on its own."""

    def __init__(self, error: Exception):
        self.error = error


class Output:
    """The student's output of the current call: the first OUTPUT_KEPT bytes, the rest counted."""

    def __init__(self):
        self.kept, self.dropped, self.tail, self.marks = bytearray(), 0, b"", 0
        self.changed = threading.Condition()

    def feed(self, chunk: bytes):
        """Take a chunk from the pipe, counting each end-of-call mark."""
        with self.changed:
            data = self.tail + chunk
            while (at := data.find(END_OF_CALL)) >= 0:
                self._keep(data[:at])
                data, self.marks = data[at + len(END_OF_CALL) :], self.marks + 1
            cut = max(0, len(data) - len(END_OF_CALL) + 1)
            self._keep(data[:cut])
            self.tail = data[cut:]
            self.changed.notify_all()

    def _keep(self, data: bytes):
        room = max(OUTPUT_KEPT - len(self.kept), 0)
        self.kept += data[:room]
        self.dropped += max(len(data) - room, 0)

    def wait_for_mark(self, count: int, seconds: float) -> bool:
        """Wait until `count` end-of-call marks have arrived; False after `seconds`."""
        with self.changed:
            return self.changed.wait_for(lambda: self.marks >= count, seconds)

    def take(self) -> str:
        """The output captured since the last take, capped, and start afresh."""
        with self.changed:
            text = (bytes(self.kept) + self.tail).decode("utf-8", errors="replace")
            if self.dropped:
                text += f"\n... ({self.dropped} more bytes of output not shown)"
            self.kept, self.dropped, self.tail = bytearray(), 0, b""
            return text


class Worker:
    """One worker process in its confinement: its pipes, its captured output, and how to end it for good.

    folder None: a worker with no files, which is only asked whether it runs (the isolation probe's).
    """

    def __init__(self, confinement, folder):
        self.confinement = confinement
        room = Room(folder, confinement.owner())
        try:
            self._start(confinement.prepare(room))
        except BaseException:  # it did not start (the user tier's cannot reach this Python, say): nothing is left of it
            if (process := getattr(self, "process", None)) is not None:
                process.kill()
                process.wait()
            room.remove()
            raise

    def _start(self, launch):
        self.launch = launch
        self.started = time.time()
        self.frames: queue.Queue = queue.Queue()
        self.output = Output()
        self.cap = STARTUP_CAP
        self.outbox: queue.Queue = queue.Queue()
        self.watch_memory = False
        self.landlocked = False  # whether Landlock confines the worker's view of the files
        self.mark_lost = False  # the student closed the output pipe: stop waiting for marks
        self.processes: list | None = None  # the worker's process tree as last seen, whose CPU time the limits count
        self.cpu = Sample()  # their CPU time lately, where each call's limit counts from
        self.quick = None  # during an exchange: answers the asks it can on the reader's thread (see exchange)
        self.sending = threading.Lock()  # one frame at a time into the request pipe, from either thread that writes
        self.process = launcher.piped(self.launch.argv, env=self.launch.env, cwd=self.launch.cwd, **self.launch.popen)
        for pipe in (self.process.stdin, self.process.stdout):
            widen(pipe)
        for target in (self._read_frames, self._read_output, self._write_frames):
            threading.Thread(target=target, daemon=True, name=f"worker-{self.process.pid}-{target.__name__}").start()

    def start(self, reference_for=()) -> None:
        """The first exchange: the worker loads the submission and says which limits it could not set.

        A worker that does not start is the grader's fault: StudentError of kind "grader".
        """
        init = {
            "op": "init",
            "folder": self.launch.folder,
            "reference_for": list(reference_for),
            "limits": {"processes": self.launch.processes, "sweep": self.launch.sweep, "simulate": simulating_other_os()},
            "parent": self.launch.parent,
        }
        ready = self._greeted(init, "ready")
        self.processes = _tree(self.process.pid)  # now with the worker itself, inside bubblewrap's processes
        self.watch_memory = "RLIMIT_AS" in ready.get("unlimited", ())
        self.landlocked = ready.get("landlocked") is True

    def hello(self) -> None:
        """Ask a worker not yet given its files whether it runs (the isolation probe); StudentError of kind "grader" if not."""
        self._greeted({"op": "hello"}, "hello")

    def _greeted(self, message: dict, word: str) -> dict:
        """The worker's reply to a message of the grader's own, which says word: True; else the worker is stopped."""
        replies = []
        try:
            self.exchange(encode(message), STARTUP_SECONDS, STARTUP_CAP, lambda frame: replies.append(decode(frame)))
            reply = replies[0]
            if type(reply) is not dict or reply.get(word) is not True:
                raise ValueError(f"it answered {reply!r:.200}")
        except (_Failed, ValueError) as failure:
            output = self.output.take()
            self.stop()
            why = output.strip() or (failure.kind if isinstance(failure, _Failed) else str(failure))
            raise StudentError("grader", f"The grader could not start its worker process ({why[-500:]}). {GRADER_FAULT}") from None
        return reply

    def exchange(self, request: bytes, limit: float, cap: int, on_frame, quick=None) -> None:
        """Send a request; hand every frame to on_frame, which returns the answer to send or None when done.

        limit: CPU seconds of the worker's processes, with a wall-clock backstop (grader.sandbox.clock).
        quick: answers the frames it can (bytes to send, else None) on the thread that reads them, which
        sends the answer itself: one thread hop each way instead of three, for asks made by the thousand.
        Raises _Failed on a timeout (its detail says which limit), a death, a frame over `cap` bytes, or too much memory.
        """
        clock, self.cap = Clock(self.process.pid, limit, self.processes, self.cpu), cap
        marks = self.output.marks
        self.quick = quick
        try:
            self.outbox.put(request)
            while True:
                item = self._next(clock)
                if isinstance(item, TooBig):
                    raise _Failed("bad_output", detail=f"a reply of {item.size} bytes, far more than this call should return")
                if isinstance(item, Raised):
                    raise item.error
                answer = on_frame(item)
                if answer is None:
                    break
                self.outbox.put(answer)
        finally:
            self.quick = None
        if not self.mark_lost and not self.output.wait_for_mark(marks + 1, OUTPUT_GRACE):
            self.mark_lost = True

    def _next(self, clock: Clock):
        """The next frame from the worker, watching its CPU time and the clock, the process and its memory."""
        while True:
            if which := clock.over():
                self.processes = clock.tree
                raise _Failed("timeout", detail=clock.said(which))
            try:
                item = self.frames.get(timeout=min(max(clock.wall_left(), 0.0), POLL))
            except queue.Empty:
                self._check_alive()
                continue
            if item is GONE:
                self._check_alive(wait=1.0)
                continue
            return item

    def _check_alive(self, wait: float = 0.0):
        """Raise _Failed when the worker has ended or uses more memory than allowed."""
        try:
            code = self.process.wait(timeout=wait) if wait else self.process.poll()
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:
            time.sleep(0.2)  # the reader may still be taking a last frame from the pipe
            if self.frames.empty():
                raise _Failed("crashed", self.launch.status(code))
        if self.watch_memory and self.memory() > MEMORY_BYTES:
            raise _Failed("memory", detail=f"{MEMORY_BYTES >> 30} GiB")

    def memory(self) -> int:
        """Bytes the worker and its children hold, by the measure this OS offers."""
        total = 0
        try:
            root = psutil.Process(self.process.pid)
            for process in [root, *root.children(recursive=True)]:
                info = process.memory_info()
                total += getattr(info, "private", 0) or (info.vms if sys.platform.startswith("linux") else info.rss)
        except psutil.Error:
            pass
        return total

    def _read_frames(self):
        """Thread: split the reply pipe into frames, refusing one over the cap before reading it."""
        pipe = self.process.stdout
        while (head := read_exactly(pipe, 8)) is not None:
            (size,) = struct.unpack("<Q", head)
            if size > self.cap:
                self.frames.put(TooBig(size))
                return
            body = read_exactly(pipe, size)
            if body is None:
                break
            quick = self.quick
            try:
                answer = quick(body) if quick is not None else None
            except Exception as error:  # noqa: BLE001  (raised again on the exchange's thread)
                self.frames.put(Raised(error))
                continue
            if answer is None:
                self.frames.put(body)
            elif not self._send(answer):
                break
        self.frames.put(GONE)

    def _read_output(self):
        """Thread: everything the student prints, kept up to a cap."""
        try:
            while chunk := self.process.stderr.read(1 << 16):
                self.output.feed(chunk)
        except (OSError, ValueError):  # closed while stopping
            pass

    def _write_frames(self):
        """Thread: send each queued frame, so a worker that stops reading cannot hold the grader."""
        while (data := self.outbox.get()) is not None:
            if not self._send(data):
                return

    def _send(self, data: bytes) -> bool:
        """Write one frame to the worker; False once it is gone (its death is noticed by the reader)."""
        with self.sending:
            try:
                write_frame(self.process.stdin, data)
            except (OSError, ValueError, TypeError):
                return False
        return True

    def stop(self):
        """End the worker and everything it started, then close its pipes and remove its room."""
        self.outbox.put(None)
        try:
            self.confinement.end(self)
        finally:
            for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
                try:
                    pipe.close()
                except OSError:
                    pass
            self.launch.room.remove()


def widen(pipe) -> None:
    """Let a pipe hold 1 MiB where the OS allows it (Linux), so a large array crosses in a few steps, not hundreds."""
    if hasattr(fcntl, "F_SETPIPE_SZ"):  # not on macOS, nor on Windows (no fcntl)
        try:
            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:  # over the system's limit: the pipe keeps its size
            pass
