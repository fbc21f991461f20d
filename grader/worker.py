"""The worker process: imports the student's folder and runs one requested call at a time.

Started by grader.sandbox with `python -I`; requests arrive on one pipe and replies
leave on another, so whatever the student prints goes to the captured output only.
"""

import builtins
import ctypes
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import resource
import signal
import struct
import sys
import time
import traceback
import types
import warnings
from pathlib import Path

import numpy as np

from grader.sandbox import MAX_FRAME, MAX_WARNINGS, PACKAGE, WARNING_CHARS, Foreign, decode, describe, encode

MEMORY_BYTES = 4 << 30
CPU_SECONDS = 600
FILE_BYTES = 64 << 20
REFERENCE = "_reference"  # the private name of the reference solutions in the worker
NUMPY_ERRORS = np.geterr()  # numpy's defaults, before any student code: warn on overflow, 0/0 and x/0


class Refused(ImportError):
    """Raised when student code imports the reference solutions."""


class BlockSolutions(importlib.abc.MetaPathFinder):
    """Refuses any import of the `solutions` package."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "solutions":
            raise Refused(f"importing {name} is not allowed")
        return None


class Fallback(importlib.abc.Loader):
    """Runs a student module; if it fails, the module becomes a copy of the reference one."""

    def __init__(self, loader, reference):
        self.loader, self.reference = loader, reference

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        try:
            self.loader.exec_module(module)
        except BaseException:  # the student's module cannot be used; the reference stands in
            module.__dict__.update({k: v for k, v in vars(self.reference).items() if not k.startswith("__")})


class FallbackFinder(importlib.abc.MetaPathFinder):
    """Wraps the loader of the student modules whose functions are graded by the reference."""

    def __init__(self, fallbacks):
        self.fallbacks = fallbacks  # {qualified module name: reference module}

    def find_spec(self, name, path=None, target=None):
        if name not in self.fallbacks:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = Fallback(spec.loader, self.fallbacks[name])
        return spec


class Session:
    """The student's package, the reference package, and the substitutions between them."""

    def __init__(self, folder, reference, reference_for):
        self.folder = Path(folder)
        self.reference = load_package(REFERENCE, Path(reference))
        self.reference_for = [name.split(".", 1) for name in reference_for]
        self.originals: dict[tuple[str, str], list] = {}
        fallbacks = {f"{PACKAGE}.{module}": self.reference_module(module) for module, _ in self.reference_for}
        sys.meta_path.insert(0, FallbackFinder(fallbacks))
        sys.meta_path.insert(0, BlockSolutions())
        load_package(PACKAGE, self.folder, run_init=False)

    def reference_module(self, module):
        """The reference version of a module."""
        return importlib.import_module(f"{REFERENCE}.{module}")

    def import_module(self, module):
        """Import a student module, then put the reference functions in place."""
        name = f"{PACKAGE}.{module}"
        if name in sys.modules:
            return sys.modules[name]
        loaded = importlib.import_module(name)
        self.substitute()
        return loaded

    def substitute(self):
        """Replace each reference_for function wherever the student package binds it."""
        modules = [m for name, m in list(sys.modules.items()) if name.startswith(PACKAGE + ".")]
        for module, function in self.reference_for:
            owner = sys.modules.get(f"{PACKAGE}.{module}")
            if owner is None:
                continue
            new = getattr(self.reference_module(module), function)
            olds = self.originals.setdefault((module, function), [])
            current = owner.__dict__.get(function)
            if current is not None and current is not new and not any(current is old for old in olds):
                olds.append(current)
            owner.__dict__[function] = new
            for other in modules:
                for key, value in list(vars(other).items()):
                    if any(value is old for old in olds):
                        vars(other)[key] = new


def load_package(name, folder, run_init=True):
    """Import a folder as a package under a private name, so relative imports work."""
    init = folder / "__init__.py"
    if run_init and init.is_file():
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
        return package
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    package.__spec__.submodule_search_locations = [str(folder)]
    sys.modules[name] = package
    return package


def main(kit, request_fd, reply_fd, parent):
    """Serve requests until the parent closes the pipe."""
    request_fd, reply_fd = int(request_fd), int(reply_fd)
    limit_resources()
    die_with(int(parent))
    sys.path.remove(kit)
    session = None
    pristine = dict(vars(builtins))  # restored after each request, so the worker's own code keeps working
    while (request := read_frame(request_fd)) is not None:
        message = decode(request, live=True)
        if message["op"] == "init":
            session = Session(message["folder"], message["reference"], message["reference_for"])
            write_frame(reply_fd, encode("ready"))
            continue
        reply = handle(session, message)
        flush()
        restore(pristine)
        write_frame(reply_fd, encoded(reply))


def handle(session, message):
    """Import a module or make a call; a dict with the value or the error."""
    module, op = message["module"], message["op"]
    try:
        loaded = session.import_module(module)
    except BaseException as error:  # whatever the student's module does at import
        return {"error": "refused" if refused(error) else "import", "message": import_failure(module, error, session.folder)}
    if op == "import":
        return {"value": None}
    function = message["function"]
    target = getattr(loaded, function, None)
    if not callable(target):
        return {"error": "import", "message": f"your {module}.py has no function {function}: keep the name and signature from the stub."}
    args = message["args"]
    start = time.perf_counter()
    try:
        with RecordWarnings() as caught:
            value = target(*args)
    except NotImplementedError:
        return {"error": "not_started", "message": f"{function} is not written yet: it still raises NotImplementedError."}
    except BaseException as error:  # the parent alone decides what a failure means
        if refused(error):
            return {"error": "refused", "message": f"{function} imports the reference solutions; write it yourself."}
        return {"error": "raised", "message": call_failure(function, error, session.folder)}
    return {"value": value, "args": args, "seconds": time.perf_counter() - start, "warnings": summary(caught)}


class RecordWarnings(warnings.catch_warnings):
    """Records every warning of a call, under numpy's default error handling and the filter "always".

    What a student module set at import (np.seterr, warnings.filterwarnings) is undone for each call,
    so it cannot change the verdict of another module's calls; what a call sets for itself is its choice.
    """

    def __init__(self):
        super().__init__(record=True)

    def __enter__(self):
        np.seterr(**NUMPY_ERRORS)
        np.seterrcall(None)
        caught = super().__enter__()
        warnings.resetwarnings()
        warnings.simplefilter("always")
        return caught


def summary(caught) -> tuple[str, ...]:
    """The first recorded warnings as "Category: message", each cut short."""
    lines = []
    for record in caught[:MAX_WARNINGS]:
        name = getattr(record.category, "__name__", "Warning")
        lines.append(f"{name}: {text(record.message)}"[:WARNING_CHARS])
    return tuple(lines)


def encoded(reply) -> bytes:
    """The reply as a message; a value or argument that cannot be sent goes as a Foreign."""
    try:
        data = encode(reply)
    except BaseException:  # e.g. a list that contains itself
        try:
            shielded = {**reply, "value": shield(reply.get("value")), "args": tuple(shield(a) for a in reply.get("args", ()))}
            data = encode(shielded)
        except BaseException as error:
            return encode({"error": "bad_output", "message": f"the value returned could not be sent to the grader ({type(error).__name__})."})
    if len(data) > MAX_FRAME:
        return encode({"error": "bad_output", "message": f"the value returned is {len(data) >> 20} MiB, over the grader's limit of {MAX_FRAME >> 20} MiB."})
    return data


def shield(value):
    """The value if it can be sent, else a Foreign saying why not."""
    try:
        encode(value)
        return value
    except BaseException as error:
        type_name, text = describe(value)
        return Foreign(type_name, f"{text[:200]} ({error})")


def refused(error) -> bool:
    """Whether an exception comes from importing the reference solutions."""
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, Refused):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def import_failure(module, error, folder) -> str:
    """Why a student module cannot be imported, for the student."""
    if refused(error):
        return f"your {module}.py imports the reference solutions; the grader does not grade it. Write the functions yourself."
    if isinstance(error, SyntaxError):
        return f"your {module}.py cannot be imported: {error.msg} ({Path(error.filename or module).name}, line {error.lineno}). Fix the syntax and save."
    if isinstance(error, SystemExit):
        return f"your {module}.py exited the interpreter at import (sys.exit {where(error, folder)}): remove that call."
    return f"your {module}.py cannot be imported: {type(error).__name__}: {text(error)} {where(error, folder)}."


def call_failure(function, error, folder) -> str:
    """What went wrong in a call, for the student."""
    place = where(error, folder)
    if isinstance(error, SystemExit):
        return f"{function} called sys.exit() {place} instead of returning: return a value instead."
    if isinstance(error, RecursionError):
        return f"{function} recursed without end (RecursionError) {place}: look for a function that calls itself."
    if isinstance(error, MemoryError):
        return f"{function} ran out of memory {place}: the grader allows {MEMORY_BYTES >> 30} GiB; look for an array far too large."
    if isinstance(error, KeyboardInterrupt):
        return f"{function} raised KeyboardInterrupt {place}: nobody pressed Ctrl-C, so remove that raise."
    return f"{function} raised {type(error).__name__}: {text(error)} {place}."


def text(error) -> str:
    """An exception's message, even if its __str__ misbehaves."""
    try:
        return str(error)[:300]
    except BaseException:
        return "(its message could not be shown)"


def where(error, folder) -> str:
    """The last line of the student's own code in the traceback, as (file, line n: code)."""
    try:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename).parent == folder]
    except BaseException:
        return ""
    if not frames:
        return ""
    last = frames[-1]
    code = f": {last.line.strip()}" if last.line else ""
    return f"({Path(last.filename).name}, line {last.lineno}{code})"


def limit_resources():
    """Memory, CPU time and file size limits, no core dumps."""
    for limit, value in (
        (resource.RLIMIT_AS, MEMORY_BYTES),
        (resource.RLIMIT_CPU, CPU_SECONDS),
        (resource.RLIMIT_FSIZE, FILE_BYTES),
        (resource.RLIMIT_CORE, 0),
    ):
        _, hard = resource.getrlimit(limit)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))


def die_with(parent):
    """Ask the kernel to kill this process when the grader that started it dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def restore(pristine):
    """Put back any builtin the student's code replaced or removed."""
    namespace = vars(builtins)
    for name, value in pristine.items():
        if namespace.get(name) is not value:
            namespace[name] = value


def flush():
    """Push the student's buffered prints into the output pipe."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:  # a replaced stream may do anything
            pass


def read_frame(fd) -> bytes | None:
    """One length-prefixed message, or None when the parent has gone."""
    head = read_exactly(fd, 8)
    if head is None:
        return None
    (size,) = struct.unpack("<Q", head)
    return read_exactly(fd, size)


def read_exactly(fd, size) -> bytes | None:
    """Exactly size bytes from a blocking fd, or None at end of file."""
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, min(size - len(data), 1 << 20))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def write_frame(fd, data: bytes):
    """One length-prefixed message."""
    view = memoryview(struct.pack("<Q", len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]
