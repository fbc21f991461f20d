"""A framed pipe to a child process: frames to its stdin, frames from its stdout, each within a cap, awaited under a deadline.

How the grader talks to a child that runs student code (a worker, compare's training job) or
answers for it (the reference helper). Threads read and write the pipes (Windows cannot wait on
pipes with select), so a child that stops reading or writing never holds the grader. Whatever comes
out is the child's bytes: a frame over the cap, a pipe that ends or a deadline passed is a
PipeFailed for the caller to put in words, and what a frame holds is decoded by the caller, strictly.
"""

import queue
import subprocess
import threading
import time

from grader.sandbox.worker.frames import FrameTooBig, read_frame, write_frame

POLL = 0.05  # seconds between looks at the child while waiting for a frame
GRACE = 1.0  # seconds a child whose pipe ended has to end too, before it is taken as still running
LAST_FRAMES = 0.2  # seconds the reader has to take a dead child's last frames from the pipe


class PipeFailed(Exception):
    """No frame came. kind: "timeout" (detail: which limit, from the deadline's over()), "too_big" (size: what the
    frame announced) or "ended" (status: the child's exit status)."""

    def __init__(self, kind: str, detail: str = "", size: int = 0, status: int | None = None):
        super().__init__(kind, detail)
        self.kind, self.detail, self.size, self.status = kind, detail, size, status


class Deadline:
    """Seconds on the clock, asked as a call's Clock is (grader.sandbox.clock): over() says "wall" once they have passed."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def wall_left(self) -> float:
        return self.end - time.monotonic()

    def over(self) -> str | None:
        return "wall" if self.wall_left() <= 0 else None


class _Raised:
    """An error of the intercept, on the reader's thread, for receive to raise on the caller's."""

    def __init__(self, error: Exception):
        self.error = error


_ENDED = object()  # the child's stdout closed


class FramedPipe:
    """Frames to a child's stdin and from its stdout (a Popen's pipes, buffered or not).

    cap: the most bytes a frame from the child may announce (set it anew for each exchange if need be).
    intercept: answers the frames it can (bytes to send, else None) on the thread that reads them,
    which sends the answer itself: one thread hop each way instead of three, for asks made by the thousand.
    """

    def __init__(self, process: subprocess.Popen, cap: int, name: str):
        self.process, self.cap = process, cap
        self.intercept = None
        self.frames: queue.Queue = queue.Queue()
        self.outbox: queue.Queue = queue.Queue()
        # one frame at a time into the child's stdin, from either thread that writes
        self.sending = threading.Lock()
        self.ended = False  # the child's stdout has closed
        for target in (self._read, self._write):
            threading.Thread(
                target=target, daemon=True, name=f"{name}-{process.pid}{target.__name__}"
            ).start()

    def send(self, data: bytes) -> None:
        """Queue one frame for the child (written by a thread: a child that stops reading cannot hold the grader)."""
        self.outbox.put(data)

    def write(self, data: bytes) -> bool:
        """Write one frame now, on this thread, for a child that reads all it is sent before it answers (the reference helper);
        False once the child is gone (its end is noticed by the reader)."""
        return self._write_now(data)

    def receive(self, deadline, idle=None) -> bytearray:
        """The child's next frame; PipeFailed past the deadline (Deadline, or a call's Clock), over the cap, or once it ended.

        idle: called between looks while nothing comes (a memory watch); it may raise.
        """
        while True:
            if which := deadline.over():
                raise PipeFailed("timeout", which)
            try:
                item = self.frames.get(timeout=min(max(deadline.wall_left(), 0.0), POLL))
            except queue.Empty:
                self._check_ended()
                if idle is not None:
                    idle()
                continue
            if item is _ENDED:
                self.ended = True
                self._check_ended(GRACE)
            elif isinstance(item, FrameTooBig):
                raise PipeFailed("too_big", size=item.size)
            elif isinstance(item, _Raised):
                raise item.error
            else:
                return item

    def _check_ended(self, wait: float = 0.0) -> None:
        """PipeFailed("ended") when the child has ended and none of its frames is left to take."""
        try:
            status = self.process.wait(timeout=wait) if wait else self.process.poll()
        except subprocess.TimeoutExpired:
            return
        if status is None:
            return
        if not self.ended:
            time.sleep(LAST_FRAMES)  # the reader may still be taking a last frame from the pipe
        if self.frames.empty():
            raise PipeFailed("ended", status=status)

    def close(self) -> None:
        """Stop the writer; the reader stops when the child's stdout closes."""
        self.outbox.put(None)

    def _read(self):
        """Thread: the child's frames, each refused over the cap before it is read; then the end."""
        pipe = self.process.stdout
        while True:
            try:
                frame = read_frame(pipe, self.cap)
            except FrameTooBig as refused:
                self.frames.put(refused)  # the pipe is out of step from here: read no more
                return
            if frame is None:
                break
            intercept = self.intercept
            try:
                answer = intercept(frame) if intercept is not None else None
            except Exception as error:  # noqa: BLE001  (raised again on the receiving thread)
                self.frames.put(_Raised(error))
                continue
            if answer is None:
                self.frames.put(frame)
            elif not self._write_now(answer):
                break
        self.frames.put(_ENDED)

    def _write(self):
        """Thread: send each queued frame."""
        while (data := self.outbox.get()) is not None:
            if not self._write_now(data):
                return

    def _write_now(self, data: bytes) -> bool:
        """Write one frame to the child; False once it is gone (its end is noticed by the reader)."""
        with self.sending:
            try:
                write_frame(self.process.stdin, data)
            except (OSError, ValueError, TypeError):
                return False
        return True
