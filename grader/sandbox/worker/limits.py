"""In the worker: resource limits where the OS has them, and dying with the grader that started it."""

import os
import sys
import threading
import time

# a worker's address space: an honest worker's peaks near 0.6 GiB (mostly reserved, not used), compare's training
# job's near 0.2, and a full softmax Jacobian at the comparison's sizes near 0.85 in either
MEMORY_BYTES = 2 << 30
CPU_SECONDS = 600
FILE_BYTES = 64 << 20
PROCESSES = 64  # only where the worker has a user of its own, so the count is its own processes
OWN_USERS = 1 << 30  # user ids from here up are users of one worker each (grader.sandbox.linux)
PARENT_POLL = 0.5  # seconds between looks at whether the grader is still there


def limit_resources(limits: dict) -> list[str]:
    """Set each POSIX limit that the OS lets us set; the names of those it would not (none on Windows)."""
    try:
        if limits.get("simulate"):
            raise ImportError("the kit's tests simulate an OS without resource")
        import resource
    except ImportError:  # Windows: the parent's wall clock and memory watch still apply
        return ["RLIMIT_AS"]
    wanted = {
        "RLIMIT_AS": MEMORY_BYTES,
        "RLIMIT_CPU": CPU_SECONDS,
        "RLIMIT_FSIZE": FILE_BYTES,
        "RLIMIT_CORE": 0,
    }
    if limits.get("processes"):
        wanted["RLIMIT_NPROC"] = PROCESSES
    refused = []
    for name, value in wanted.items():
        limit = getattr(resource, name, None)
        try:
            _, hard = resource.getrlimit(limit)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError, TypeError):  # macOS will not lower RLIMIT_AS this way
            refused.append(name)
    return refused


def watch_parent(parent: int | None, death_signal: bool = True) -> None:
    """End this process soon after the grader that started it ends, on every OS.

    parent is None where the grader cannot be seen (a PID namespace, whose end ends us anyway).
    """
    if parent is None or os.getppid() != parent and sys.platform != "win32":
        return
    if sys.platform.startswith("linux") and death_signal:
        _death_signal()
    threading.Thread(target=_wait_for, args=(parent,), daemon=True, name="grader-watch").start()


def _death_signal() -> None:
    """Linux: the kernel kills this process the moment its parent dies (PR_SET_PDEATHSIG)."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _wait_for(parent: int) -> None:
    """Exit once the parent is gone: on Windows by waiting on its handle, elsewhere by its pid changing."""
    if sys.platform == "win32":
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x00100000, False, parent)  # SYNCHRONIZE
        if handle:
            ctypes.windll.kernel32.WaitForSingleObject(handle, 0xFFFFFFFF)
        os._exit(1)
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    os._exit(1)


def end_leftovers() -> None:
    """Kill every other process this worker may signal, and reap them: what the last call left running.

    Only where that is exactly the worker's own (a user of its own, or a PID namespace): the
    grader asks for it then, so every call starts alone, whatever the one before it started.
    """
    import signal

    if not own_world():
        return
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:  # nothing else to signal
        pass
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def own_world() -> bool:
    """Whether every process this one may signal is its own: a user of its own, or first in a PID namespace."""
    return os.getpid() <= 2 or (hasattr(os, "getuid") and os.getuid() >= OWN_USERS)
