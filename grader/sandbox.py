"""Running untrusted student code in a worker process, one call at a time.

The parent sends each call over a pipe, waits for the answer with a wall-clock
limit, and kills the worker's whole process group when the limit passes or the
worker dies; a fresh worker then serves the next call. Values cross as JSON for
the structure and `.npy` bytes for arrays (never pickle), so nothing the student
returns can run code in the parent.
"""

import ast
import functools
import json
import math
import os
import re
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
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grader.paths import KIT_ROOT, MODULES, SOLUTIONS_DIR
from grader.toymodel import BatchFeed, LinearModel

STARTUP_SECONDS = 60.0  # starting a worker is the grader's cost, not the student's
MAX_FRAME = 512 << 20  # bytes in one message
OUTPUT_KEPT = 16 << 10  # bytes of the student's output kept per call
MAX_WARNINGS = 10  # warnings kept per call
WARNING_CHARS = 200  # characters kept of each
MAX_DEPTH = 32  # nesting of lists, tuples and dicts in a value
ARRAY_KINDS = "biufcSU"  # bool, integers, floats, complex, bytes, str: no objects
KEY_TYPES = (str, int, float, bool, type(None))
NPY_MAGIC = b"\x93NUMPY\x01\x00"
NPY_HEADER = re.compile(r"\{'descr': '(?P<descr>[<>|=]?[biufcSU]\d+)', 'fortran_order': False, 'shape': \((?P<shape>[\d, ]*)\), \} *\n")
PACKAGE = "_submission"  # the private name the student's folder is imported under
TOKEN_VAR = "ATTENTION_BY_HAND_WORKER"  # marks every process the worker starts
RUN_VAR = "ATTENTION_BY_HAND_RUN"  # passed on to workers, so whoever set it can find what they left


class StudentError(Exception):
    """The student's code did not return a value; kind says how, message says it to the student."""

    KINDS = ("not_started", "raised", "timeout", "crashed", "import", "bad_output", "refused")

    def __init__(self, kind: str, message: str, output: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.output = output


@dataclass
class Outcome:
    """A call that returned: its value, its arguments afterwards, its time, its printed output and warnings.

    warnings: "Category: message" of each warning the call gave (numpy's default error handling,
    every warning recorded, not only the first of its kind), at most MAX_WARNINGS.
    """

    value: Any
    args: tuple
    seconds: float
    output: str = ""
    warnings: tuple[str, ...] = ()


@dataclass
class Foreign:
    """A value of a type that may not cross the boundary, by type name and a short repr."""

    type_name: str
    text: str


@dataclass
class ToyModel:
    """Stands for the kit's LinearModel with these params: {"w": (C, O), "b": (O,)}."""

    params: dict


@dataclass
class Batches:
    """Stands for an iterator over these (x, y) pairs; after a call, taken says how many were used."""

    pairs: list
    taken: int = 0


# The codec: the same on both sides of the pipe.


def encode(value) -> bytes:
    """A message: a JSON head describing the value, then the arrays as .npy bytes."""
    blobs: list[bytes] = []
    tree = _tree(value, blobs, 0)
    head = json.dumps({"tree": tree, "sizes": [len(blob) for blob in blobs]}).encode()
    return struct.pack("<I", len(head)) + head + b"".join(blobs)


def decode(data, live: bool = False):
    """The value of a message; live (in the worker) turns ToyModel and Batches into working objects."""
    data = memoryview(data)
    (size,) = struct.unpack_from("<I", data)
    head = json.loads(bytes(data[4 : 4 + size]))
    blobs, start = [], 4 + size
    for length in head["sizes"]:
        blobs.append(data[start : start + length])
        start += length
    if start != len(data):
        raise ValueError("message length does not match its head")
    return _value(head["tree"], blobs, live)


def _tree(value, blobs, depth):
    """The JSON description of a value; its arrays appended to blobs."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is np.ndarray and value.dtype.kind in ARRAY_KINDS and not value.dtype.hasobject:
        return ["a", _blob(value, blobs)]
    if isinstance(value, np.generic) and kind.__module__ == "numpy" and value.dtype.kind in ARRAY_KINDS:
        return ["s", _blob(np.asarray(value), blobs)]
    if kind in (list, tuple, dict, ToyModel, LinearModel, Batches, BatchFeed) and depth >= MAX_DEPTH:
        raise ValueError(f"a value nested more than {MAX_DEPTH} levels deep")
    if kind is list or kind is tuple:
        return ["l" if kind is list else "t", [_tree(item, blobs, depth + 1) for item in value]]
    if kind is dict and all(type(key) in KEY_TYPES for key in value):
        return ["d", [[key, _tree(item, blobs, depth + 1)] for key, item in value.items()]]
    if kind is ToyModel or kind is LinearModel:
        return ["m", _tree(value.params, blobs, depth + 1)]
    if kind is Batches or kind is BatchFeed:
        return ["b", _tree(value.pairs, blobs, depth + 1), int(value.taken)]
    if kind is Foreign:
        return ["f", value.type_name, value.text]
    if kind is np.ndarray:
        return ["f", f"numpy.ndarray with dtype {value.dtype}", describe(value)[1]]
    return ["f", *describe(value)]


def _blob(array, blobs):
    """Append the array as .npy bytes (format 1.0, C order); its index among the blobs."""
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    header = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (array.dtype.str, array.shape)
    header += " " * (-(len(NPY_MAGIC) + 2 + len(header) + 1) % 64) + "\n"
    blobs.append(NPY_MAGIC + struct.pack("<H", len(header)) + header.encode("latin1") + array.tobytes())
    return len(blobs) - 1


def describe(value):
    """Type name and a short repr of a value that may not cross; its repr may be student code."""
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", "object")
    if module.startswith(PACKAGE + "."):
        module = module[len(PACKAGE) + 1 :]
    type_name = name if module in ("", "builtins") else f"{module}.{name}"
    try:
        text = repr(value)
    except BaseException:  # a student's __repr__ may raise anything
        text = f"<{type_name} whose repr failed>"
    if type(text) is not str:
        text = f"<{type_name}>"
    return type_name, text[:300]


def _value(node, blobs, live):
    """The value described by a JSON node."""
    if node is None or type(node) in (bool, int, float, str):
        return node
    tag, *rest = node
    if tag == "a":
        return _array(blobs[rest[0]])
    if tag == "s":
        array = _array(blobs[rest[0]])
        if array.ndim != 0:
            raise ValueError("a numpy scalar must be 0-dimensional")
        return array[()]
    if tag == "l":
        return [_value(item, blobs, live) for item in rest[0]]
    if tag == "t":
        return tuple(_value(item, blobs, live) for item in rest[0])
    if tag == "d":
        if not all(type(key) in KEY_TYPES for key, _ in rest[0]):
            raise ValueError("dict keys must be plain scalars")
        return {key: _value(item, blobs, live) for key, item in rest[0]}
    if tag == "f":
        return Foreign(str(rest[0]), str(rest[1]))
    if tag == "m":
        params = _value(rest[0], blobs, live)
        return LinearModel(params) if live else ToyModel(params)
    if tag == "b":
        pairs = _value(rest[0], blobs, live)
        return BatchFeed(pairs) if live else Batches(pairs, int(rest[1]))
    raise ValueError(f"unknown tag {tag!r}")


def _array(blob):
    """A writable ndarray from .npy bytes; only plain dtypes, never pickled objects."""
    blob = memoryview(blob)
    if bytes(blob[: len(NPY_MAGIC)]) != NPY_MAGIC:
        raise ValueError("not .npy bytes")
    (size,) = struct.unpack_from("<H", blob, len(NPY_MAGIC))
    start = len(NPY_MAGIC) + 2 + size
    dtype, shape = _header(bytes(blob[len(NPY_MAGIC) + 2 : start]))
    if dtype.itemsize * math.prod(shape) != len(blob) - start:
        raise ValueError("an array whose size does not match its data")
    return np.frombuffer(blob[start:], dtype=dtype).reshape(shape).copy()


@functools.lru_cache(maxsize=256)
def _header(header: bytes):
    """The dtype and shape in an .npy header of the form the grader writes."""
    found = NPY_HEADER.fullmatch(header.decode("latin1"))
    if found is None:
        raise ValueError("an .npy header the grader does not write")
    dtype = np.dtype(found["descr"])
    if dtype.kind not in ARRAY_KINDS or dtype.hasobject:
        raise ValueError(f"an array of dtype {dtype}")
    return dtype, tuple(int(n) for n in found["shape"].replace(",", " ").split())


# Refusing submissions that import the reference solutions.


def refusals(folder: Path) -> dict[str, str]:
    """For each module that imports the reference solutions, directly or through a sibling: why."""
    direct, siblings = {}, {}
    for path in sorted(folder.glob("*.py")):
        try:
            tree = ast.parse(path.read_bytes(), filename=path.name)
        except (SyntaxError, ValueError, OSError):
            continue  # the worker reports it when the module is imported
        siblings[path.stem] = set()
        for node in ast.walk(tree):
            line = _solutions_import(node)
            if line and path.stem not in direct:
                direct[path.stem] = f"{path.name} imports the reference solutions (line {line})"
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module] if node.module else [alias.name for alias in node.names]
                siblings[path.stem].update(name.split(".")[0] for name in names)
    found = {}
    for name in MODULES:
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            if current in direct:
                found[name] = direct[current]
                break
            todo.extend(siblings.get(current, ()))
    return found


def _solutions_import(node) -> int | None:
    """The line of an import of `solutions` (statement, __import__ or importlib), else None."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module]
    elif isinstance(node, ast.Call):
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if called in ("__import__", "import_module") and node.args and isinstance(node.args[0], ast.Constant):
            names = [str(node.args[0].value)]
    return node.lineno if any(name.split(".")[0] == "solutions" for name in names) else None


# The parent's side.


class Student:
    """A submission folder, graded call by call in a worker process that the parent can kill.

    reference_for names functions ("softmax.softmax") that the worker replaces by the reference
    wherever the student's package binds them; a module holding such a function that cannot be
    imported is replaced by the reference module. The worker dies with the thread that started
    it (PR_SET_PDEATHSIG), so use a Student from the thread that created it, or one that outlives it.
    """

    def __init__(self, folder: Path, *, reference_for: Collection[str] = (), timeout: float = 10.0):
        self.folder = Path(folder).resolve()
        self.reference_for = tuple(reference_for)
        for qualified in self.reference_for:
            module, _, function = qualified.partition(".")
            if module not in MODULES or not function:
                raise ValueError(f"reference_for names module.function, got {qualified!r}")
        self.timeout = timeout
        self._refused = refusals(self.folder)
        self._broken: dict[str, StudentError] = {}  # modules that cannot be imported
        self._imported: set[str] = set()
        self._worker: _Worker | None = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Stop the worker and every process it started."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        self._imported.clear()

    def call(self, module: str, function: str, *args, timeout: float | None = None) -> Outcome:
        """Call module.function(*args) in the worker; raises StudentError unless it returns."""
        limit = self.timeout if timeout is None else timeout
        if module in self._refused:
            raise StudentError("refused", f"{self._refused[module]}; the grader does not grade it. Write the functions yourself.")
        if module in self._broken:
            raise self._broken[module]
        if module not in self._imported:
            self._import(module, limit)
        reply = self._exchange({"op": "call", "module": module, "function": function, "args": args}, limit, function)
        if "error" in reply:
            raise StudentError(reply["error"], reply["message"], reply["output"])
        return Outcome(reply["value"], reply["args"], reply["seconds"], reply["output"], reply["warnings"])

    def _import(self, module, limit):
        """Import the module in the worker, remembering a failure for the calls that follow."""
        try:
            reply = self._exchange({"op": "import", "module": module}, limit, f"importing {module}.py")
        except StudentError as error:
            if error.kind == "timeout":
                error = StudentError("import", f"importing your {module}.py did not finish within {limit:g} s: look for a loop at module level.", error.output)
            elif error.kind == "crashed":
                error = StudentError("import", f"your {module}.py ended the Python process while being imported ({error.message}): remove the module-level code that does it.", error.output)
            self._broken[module] = error
            raise error from None
        if "error" in reply:
            self._broken[module] = StudentError(reply["error"], reply["message"], reply["output"])
            raise self._broken[module]
        self._imported.add(module)

    def _exchange(self, message, limit, what):
        """Send one request and wait for its reply, enforcing the limit; a dead worker becomes a StudentError."""
        if self._worker is None:
            self._worker = _Worker(self.folder, self.reference_for)
            self._imported.clear()
        worker = self._worker
        try:
            reply = worker.exchange(encode(message), limit)
        except _Failed as failure:
            output = worker.output()
            worker.stop()
            self._worker = None
            raise StudentError(failure.kind, failure.describe(what, limit), output) from None
        try:
            reply = _checked(decode(reply), message["op"])
        except Exception as error:
            output = worker.output()
            worker.stop()
            self._worker = None
            raise StudentError("bad_output", f"what {what} returned could not be read back ({error}).", output) from None
        reply["output"] = worker.output()
        return reply


def _checked(reply, op):
    """The worker's reply if it has the shape the protocol promises; the worker runs student code."""
    if type(reply) is not dict:
        raise ValueError("the reply is not a dict")
    if "error" in reply:
        if reply["error"] not in StudentError.KINDS or type(reply.get("message")) is not str:
            raise ValueError("an error reply without a known kind and a message")
    elif "value" not in reply or op == "call" and not (type(reply.get("args")) is tuple and type(reply.get("seconds")) is float):
        raise ValueError("a reply without value, args and seconds")
    elif op == "call":
        caught = reply.get("warnings")
        if type(caught) is not tuple or not all(type(line) is str for line in caught):
            raise ValueError("a reply whose warnings are not a tuple of str")
        reply["warnings"] = tuple(line[:WARNING_CHARS] for line in caught[:MAX_WARNINGS])
    return reply


class _Failed(Exception):
    """The worker gave no reply: it timed out, died, or sent something unreadable."""

    def __init__(self, kind, status=None, detail=""):
        super().__init__(kind)
        self.kind, self.status, self.detail = kind, status, detail

    def describe(self, what, limit):
        """The student-facing sentence; for an import, only how the process ended."""
        if self.kind == "timeout":
            return f"{what} did not return within {limit:g} s: look for a loop that never ends, or work that grows too fast."
        if self.kind == "bad_output":
            return f"what {what} returned could not be read back: {self.detail}."
        if what.startswith("importing "):
            return _how(self.status)
        if self.status is not None and self.status >= 0:
            return f"{what} ended the Python process ({_how(self.status)}) instead of returning: return a value instead."
        return f"{what} crashed the Python process ({_how(self.status)}): look for ctypes, os or signal tricks."


def _how(status) -> str:
    """How the worker ended, from its exit status."""
    if status is None:
        return "it stopped without answering"
    if status >= 0:
        return f"exit status {status}, as os._exit does"
    number = -status
    if number == signal.SIGSEGV:
        return "segmentation fault"
    if number == signal.SIGKILL:
        return "killed, most likely for using far too much memory"
    if number == signal.SIGXCPU:
        return "out of CPU time"
    return signal.Signals(number).name if number in signal.valid_signals() else f"signal {number}"


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
        boot = "import sys; sys.path.insert(0, sys.argv[1]); from grader.worker import main; main(*sys.argv[1:])"
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
