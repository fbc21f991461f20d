"""Process control on every OS: start a worker, talk to it under a time limit, end it and all it started.

Threads read the worker's pipes (Windows cannot wait on pipes with select), and psutil looks at
processes (no /proc, pidfd or process group is needed). How the worker is confined, and how
everything it started is ended, is the confinement's business (grader.sandbox.isolation).
"""

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
from grader.sandbox.errors import StudentError, _Failed
from grader.sandbox.pipes import FramedPipe, PipeFailed
from grader.sandbox.portable import simulating_other_os
from grader.sandbox.private import Room
from grader.sandbox.worker.codec import decode, encode
from grader.sandbox.worker.frames import END_OF_CALL
from grader.sandbox.worker.limits import MEMORY_BYTES

STARTUP_SECONDS = 60.0  # starting a worker is the grader's cost, not the student's
STARTUP_CAP = 1 << 20  # bytes of the worker's first reply
PIPE_BYTES = 1 << 20  # the request and reply pipes' size, where it can be set
OUTPUT_KEPT = 16 << 10  # bytes of the student's output kept per call
OUTPUT_GRACE = 1.0  # seconds to wait for a call's output after its reply
SERVE = "grader.sandbox.worker.serve"  # what the worker's boot runs
GRADER_FAULT = "This is a fault in the grader, not in your code: please report it, with this message, to your instructor."


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


class WorkerProcess:
    """One worker process in its confinement: its framed pipe, its captured output, and how to end it for good.

    folder None: a worker with no files, which is only asked whether it runs (the isolation probe's).
    """

    def __init__(self, confinement, folder):
        self.confinement = confinement
        room = Room(folder, confinement.owner())
        try:
            self._start(confinement.prepare(room, SERVE))
        except BaseException:  # it did not start (the user tier's cannot reach this Python, say): nothing is left of it
            if (process := getattr(self, "process", None)) is not None:
                process.kill()
                process.wait()
            room.remove()
            raise

    def _start(self, launch):
        self.launch = launch
        self.started = time.time()
        self.output = Output()
        self.watch_memory = False
        self.landlocked = False  # whether Landlock confines the worker's view of the files
        self.mark_lost = False  # the student closed the output pipe: stop waiting for marks
        self.processes: list | None = (
            None  # the worker's process tree as last seen, whose CPU time the limits count
        )
        self.cpu = Sample()  # their CPU time lately, where each call's limit counts from
        try:
            self.process = launcher.piped(
                self.launch.argv, env=self.launch.env, cwd=self.launch.cwd, **self.launch.popen
            )
        finally:
            self.launch.release()
        for pipe in (self.process.stdin, self.process.stdout):
            widen(pipe)
        self.pipe = FramedPipe(self.process, STARTUP_CAP, "worker")
        threading.Thread(
            target=self._read_output, daemon=True, name=f"worker-{self.process.pid}-output"
        ).start()

    def start(self, reference_for=()) -> None:
        """The first exchange: the worker loads the submission and says which limits it could not set.

        A worker that does not start is the grader's fault: StudentError of kind "grader".
        """
        init = {
            "op": "init",
            "folder": self.launch.folder,
            "reference_for": list(reference_for),
            "limits": {
                "processes": self.launch.processes,
                "sweep": self.launch.sweep,
                "simulate": simulating_other_os(),
            },
            "parent": self.launch.parent,
        }
        ready = self._greeted(init, "ready")
        # now with the worker itself, inside bubblewrap's processes
        self.processes = _tree(self.process.pid)
        self.watch_memory = "RLIMIT_AS" in ready.get("unlimited", ())
        self.landlocked = ready.get("landlocked") is True

    def hello(self) -> None:
        """Ask a worker not yet given its files whether it runs (the isolation probe); StudentError of kind "grader" if not."""
        self._greeted({"op": "hello"}, "hello")

    def _greeted(self, message: dict, word: str) -> dict:
        """The worker's reply to a message of the grader's own, which says word: True; else the worker is stopped."""
        replies = []
        try:
            self.exchange(
                encode(message),
                STARTUP_SECONDS,
                STARTUP_CAP,
                lambda frame: replies.append(decode(frame)),
            )
            reply = replies[0]
            if type(reply) is not dict or reply.get(word) is not True:
                raise ValueError(f"it answered {reply!r:.200}")
        except (_Failed, ValueError) as failure:
            output = self.output.take()
            self.stop()
            why = output.strip() or (failure.kind if isinstance(failure, _Failed) else str(failure))
            raise StudentError(
                "grader",
                f"The grader could not start its worker process ({why[-500:]}). {GRADER_FAULT}",
            ) from None
        return reply

    def exchange(self, request: bytes, limit: float, cap: int, on_frame, quick=None) -> None:
        """Send a request; hand every frame to on_frame, which returns the answer to send or None when done.

        limit: CPU seconds of the worker's processes, with a wall-clock backstop (grader.sandbox.clock).
        quick: answers the frames it can on the thread that reads them (FramedPipe.intercept).
        Raises _Failed on a timeout (its detail says which limit), a death, a frame over `cap` bytes, or too much memory.
        """
        clock, self.pipe.cap, self.pipe.intercept = (
            Clock(self.process.pid, limit, self.processes, self.cpu),
            cap,
            quick,
        )
        marks = self.output.marks
        try:
            self.pipe.send(request)
            while True:
                try:
                    frame = self.pipe.receive(clock, idle=self._check_memory)
                except PipeFailed as failed:
                    raise self._failed(failed, clock) from None
                answer = on_frame(frame)
                if answer is None:
                    break
                self.pipe.send(answer)
        finally:
            self.pipe.intercept = None
        if not self.mark_lost and not self.output.wait_for_mark(marks + 1, OUTPUT_GRACE):
            self.mark_lost = True

    def _failed(self, failed: PipeFailed, clock: Clock) -> _Failed:
        """Why no reply came, in the words of a call that failed."""
        if failed.kind == "timeout":
            self.processes = clock.tree
            return _Failed("timeout", detail=clock.said(failed.detail))
        if failed.kind == "too_big":
            return _Failed(
                "bad_output",
                detail=f"a reply of {failed.size} bytes, far more than this call should return",
            )
        return _Failed("crashed", self.launch.status(failed.status))

    def _check_memory(self):
        """Raise _Failed when the worker uses more memory than allowed (where no limit of the OS holds it)."""
        if self.watch_memory and self.memory() > MEMORY_BYTES:
            raise _Failed("memory", detail=f"{MEMORY_BYTES >> 30} GiB")

    def memory(self) -> int:
        """Bytes the worker and its children hold, by the measure this OS offers."""
        total = 0
        try:
            root = psutil.Process(self.process.pid)
            for process in [root, *root.children(recursive=True)]:
                info = process.memory_info()
                total += getattr(info, "private", 0) or (
                    info.vms if sys.platform.startswith("linux") else info.rss
                )
        except psutil.Error:
            pass
        return total

    def _read_output(self):
        """Thread: everything the student prints, kept up to a cap."""
        try:
            while chunk := self.process.stderr.read(1 << 16):
                self.output.feed(chunk)
        except (OSError, ValueError):  # closed while stopping
            pass

    def stop(self):
        """End the worker and everything it started, then close its pipes and remove its room."""
        self.pipe.close()
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
