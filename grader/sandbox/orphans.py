"""Processes the student's code leaves behind: kept as this process's descendants (Linux's child subreaper), then killed."""

import ctypes
import os
import signal
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make every orphan among this process's descendants its child, not init's; False where Linux does not allow it."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def kill_descendants() -> list[int]:
    """Kill every live process descended from this one, whatever its session or environment; their pids."""
    killed: list[int] = []
    for _ in range(5):  # a process may fork while we look
        found = descendants(os.getpid())
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except (ProcessLookupError, PermissionError):
                pass
        reap()
        if not found:
            break
    return killed


def descendants(ancestor: int) -> list[int]:
    """The live processes below ancestor in the process tree."""
    parents = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            fields = stat[stat.rindex(b")") + 2 :].split()
            if fields[0] != b"Z":
                parents[int(name)] = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], {ancestor}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - set(found)
        found += sorted(frontier)
    return found


def reap() -> None:
    """Collect the exit status of every child that has ended, so none stays a zombie."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
