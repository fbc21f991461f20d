"""Ending processes and all they started, and the environment they start with, on every OS (psutil)."""

import os
import subprocess
import sys
import time

import psutil

TOKEN_VAR = "ATTENTION_BY_HAND_WORKER"  # marks every process a worker starts
RUN_VAR = "ATTENTION_BY_HAND_RUN"  # passed on to workers, so whoever set it can find what they left
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def end_processes(processes: list, seconds: float = 5.0) -> None:
    """Kill these psutil processes and wait, at most `seconds`, until each has ended (ours are reaped here)."""
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            pass
    deadline, left = time.monotonic() + seconds, list(processes)
    while left := [process for process in left if not ended(process)]:
        if time.monotonic() >= deadline:
            return
        time.sleep(0.005)


def ended(process) -> bool:
    """Whether a process has ended: reaped (a child of ours is reaped here) or a zombie its parent has yet to reap.

    An orphan's zombie waits for the system's init, which may reap it only after a second
    (psutil.wait_procs waited for that: 1.2 s to end a watch's check); it runs nothing meanwhile.
    """
    try:
        process.wait(timeout=0)
        return True
    except psutil.TimeoutExpired:
        pass
    except psutil.Error:
        return True
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def end_tree(process: subprocess.Popen) -> None:
    """Kill a process we started and every process below it, then reap it (any OS)."""
    if process.poll() is None:
        try:
            root = psutil.Process(process.pid)
            end_processes([root, *root.children(recursive=True)])
        except psutil.Error:
            pass
    process.wait()


def marked(marker: str, since: float = 0.0) -> list:
    """Every process started since `since` (epoch seconds) whose environment holds VAR=value."""
    name, _, value = marker.partition("=")
    found = []
    for process in psutil.process_iter(["create_time"]):
        try:
            if (
                process.info["create_time"] + 1 >= since
                and process.pid != os.getpid()
                and process.environ().get(name) == value
            ):
                found.append(process)
        except psutil.Error:
            pass
    return found


def kill_marked(marker: str, since: float = 0.0) -> list[int]:
    """Kill every process carrying VAR=value in its environment, until none is left; their pids."""
    killed: list[int] = []
    for _ in range(5):  # a process may start another while we look
        found = marked(marker, since)
        if not found:
            break
        end_processes(found)
        killed += [process.pid for process in found]
    return killed


def isolated_env(home: str) -> dict[str, str]:
    """The whole environment of a process that runs student code: PATH, a home of its own, one BLAS thread."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": home,
        "TMPDIR": home,
        "TEMP": home,
        "TMP": home,
        "LANG": "C.UTF-8",
        **ONE_THREAD,
    }
    if sys.platform == "win32":  # Python cannot start without these on Windows
        env.update(
            {
                name: os.environ[name]
                for name in ("SYSTEMROOT", "WINDIR", "USERPROFILE")
                if name in os.environ
            }
        )
    return env


def new_session() -> dict:
    """Popen arguments that keep the terminal's Ctrl-C away from a worker, on each OS."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}
