"""Process control: start a worker, exchange messages with it under a time limit, stop it and all it started."""

import math
import os
import secrets
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox.codec import MAX_FRAME, decode, encode
from grader.sandbox.errors import StudentError, _Failed

STARTUP_SECONDS = 60.0  # starting a worker is the grader's cost, not the student's
OUTPUT_KEPT = 16 << 10  # bytes of the student's output kept per call
TOKEN_VAR = "ATTENTION_BY_HAND_WORKER"  # marks every process the worker starts
RUN_VAR = "ATTENTION_BY_HAND_RUN"  # passed on to workers, so whoever set it can find what they left


ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def isolated_env(home: str) -> dict[str, str]:
    """The whole environment of a process that runs student code: PATH, a home of its own, one BLAS thread."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8", **ONE_THREAD}


class _Worker:
    """One worker process: its pipes, its captured output, and how to stop it for good."""

    def __init__(self, folder: Path, reference_for: tuple[str, ...]):
        self.token = secrets.token_hex(8)
        self.home = tempfile.mkdtemp(prefix="grader-worker-")
        request_r, self.request_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        self.output_r, output_w = os.pipe()
        env = {**isolated_env(self.home), TOKEN_VAR: self.token}
        if RUN_VAR in os.environ:
            env[RUN_VAR] = os.environ[RUN_VAR]
        boot = "import sys; sys.path.insert(0, sys.argv[1]); from grader.sandbox.worker import main; main(*sys.argv[1:])"
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", boot, str(KIT_ROOT), str(request_r), str(reply_w), str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=output_w,
                stderr=output_w,
                pass_fds=(request_r, reply_w),
                start_new_session=True,
                cwd=self.home,
                env=env,
            )
        finally:
            for fd in (request_r, reply_w, output_w):
                os.close(fd)
        for fd in (self.request_w, self.reply_r, self.output_r):
            os.set_blocking(fd, False)
        self.pidfd = os.pidfd_open(self.process.pid)
        self._stop = weakref.finalize(
            self, _shut_down, os.getpid(), self.process, self.token, self.home,
            (self.request_w, self.reply_r, self.output_r, self.pidfd),
        )
        self._kept, self._dropped = bytearray(), 0
        try:
            init = {"op": "init", "folder": str(folder), "reference": str(SOLUTIONS_DIR), "reference_for": list(reference_for)}
            reply = decode(self.exchange(encode(init), STARTUP_SECONDS))
        except (_Failed, ValueError) as failure:
            output = self.output()
            self.stop()
            raise StudentError("crashed", f"the grader could not start its worker process: {output or failure}") from None
        if reply != "ready":
            self.stop()
            raise StudentError("crashed", f"the grader's worker process did not start: {reply!r}")

    def stop(self):
        """Kill the worker, everything it started, and remove its home folder."""
        self._stop()

    def output(self) -> str:
        """The output captured since the last request, capped."""
        self._drain()
        text = self._kept.decode("utf-8", errors="replace")
        if self._dropped:
            text += f"\n... ({self._dropped} more bytes of output not shown)"
        return text

    def exchange(self, request: bytes, limit: float) -> bytes:
        """Send a request frame, return the reply frame's body; raises _Failed."""
        self._drain()
        self._kept, self._dropped = bytearray(), 0
        pending = memoryview(struct.pack("<Q", len(request)) + request)
        reply, needed = bytearray(), None
        poller = select.poll()
        poller.register(self.reply_r, select.POLLIN)
        poller.register(self.output_r, select.POLLIN)
        poller.register(self.pidfd, select.POLLIN)
        poller.register(self.request_w, select.POLLOUT)
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Failed("timeout")
            for fd, _ in poller.poll(math.ceil(left * 1000)):
                if fd == self.request_w:
                    try:
                        pending = pending[os.write(fd, pending[: 1 << 20]) :]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        poller.unregister(fd)
                elif fd == self.output_r:
                    if not self._read_output():
                        poller.unregister(fd)
                elif fd == self.reply_r:
                    chunk = _read(fd, 1 << 20)
                    if chunk == b"":
                        poller.unregister(fd)  # closed: the worker is gone, pidfd says so
                    reply += chunk or b""
                elif fd == self.pidfd:
                    reply += self._rest_of_reply()
                    if not _complete(reply):
                        raise _Failed("crashed", self.process.wait())
            if needed is None and len(reply) >= 8:
                (needed,) = struct.unpack_from("<Q", reply)
                if needed > MAX_FRAME:
                    raise _Failed("bad_output", detail=f"a reply of {needed} bytes is over the grader's limit of {MAX_FRAME >> 20} MiB")
            if needed is not None and len(reply) >= 8 + needed:
                return bytes(reply[8 : 8 + needed])

    def _rest_of_reply(self) -> bytes:
        """Whatever the dead worker left in the reply pipe."""
        rest = bytearray()
        while chunk := _read(self.reply_r, 1 << 20):
            rest += chunk
        return bytes(rest)

    def _read_output(self) -> bool:
        """Read what is waiting on the output pipe into the capped capture; False at end of file."""
        chunk = _read(self.output_r, 1 << 20)
        if chunk is None:
            return True
        room = OUTPUT_KEPT - len(self._kept)
        self._kept += chunk[: max(room, 0)]
        self._dropped += max(len(chunk) - max(room, 0), 0)
        return chunk != b""

    def _drain(self):
        """Read output already waiting, a bounded amount so a chatty process cannot hold us here."""
        for _ in range(64):
            if not self._read_output() or not select.select([self.output_r], [], [], 0)[0]:
                return


def _read(fd, size) -> bytes | None:
    """Up to size bytes from a non-blocking fd; None when nothing is waiting, b"" at end of file."""
    try:
        return os.read(fd, size)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _complete(reply) -> bool:
    """Whether a whole frame has arrived."""
    return len(reply) >= 8 and len(reply) >= 8 + struct.unpack_from("<Q", reply)[0]


def _shut_down(owner, process, token, home, fds):
    """Kill the worker's process group and any process still carrying its token; close and clean up."""
    if os.getpid() != owner:
        return  # a forked copy of the grader exiting: the worker is not its to stop
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    kill_strays(token, process.pid)
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    shutil.rmtree(home, ignore_errors=True)


def kill_strays(token: str, session: int) -> list[int]:
    """Kill every process in the worker's session or with its token in its environment; their pids."""
    return kill_marked(f"{TOKEN_VAR}={token}".encode(), session)


def kill_marked(marker: bytes, session: int | None = None) -> list[int]:
    """Kill every process with this VAR=value in its environment (or in this session); their pids."""
    killed: list[int] = []
    for _ in range(5):  # a process may fork while we look
        found = [pid for pid in _pids() if pid != os.getpid() and _belongs(pid, marker, session)]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except (ProcessLookupError, PermissionError):
                pass
    return killed


def _pids():
    """The ids of the processes now running."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _belongs(pid, marker, session) -> bool:
    """Whether a process is in the worker's session or carries its token."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] == b"Z":
            return False  # already dead, waiting for its parent
        if int(fields[3]) == session:
            return True
        return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except (OSError, ValueError, IndexError):
        return False
