"""For the kit's tests: every worker a test starts, and whatever of it is still running afterwards."""

import os
import time
from dataclasses import dataclass

import psutil

from grader.sandbox import process
from grader.sandbox.tree import TOKEN_VAR


@dataclass
class Started:
    """One worker as started: its process, the token in its environment, its user, its PID namespace."""

    pid: int
    token: str
    uid: int | None
    namespace: str | None


def pid_namespace(pid: int) -> str | None:
    """The PID namespace a process is in (Linux), e.g. 'pid:[4026532]'."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def record(monkeypatch) -> list[Started]:
    """Remember every worker started from now on in this test."""
    started: list[Started] = []
    original = process.WorkerProcess.start

    def start(self, *args, **kwargs):
        try:
            return original(self, *args, **kwargs)
        finally:
            namespace = None
            if self.confinement.name == "namespaces":
                children = psutil.Process(self.process.pid).children() if self.process.poll() is None else []
                namespace = pid_namespace(children[0].pid) if children else None
            started.append(Started(self.process.pid, self.launch.token, self.launch.uid, namespace))

    monkeypatch.setattr(process.WorkerProcess, "start", start)
    return started


def survivors(started: list[Started], wait: float = 2.0) -> list[str]:
    """Processes still alive that belong to these workers: by token, by user, or by PID namespace."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for proc in psutil.process_iter(["pid", "uids", "status"]):
            if proc.info["status"] == psutil.STATUS_ZOMBIE or proc.pid == os.getpid():
                continue
            for worker in started:
                if belongs(proc, worker):
                    found.append(f"{proc.pid} ({' '.join(safe_cmdline(proc))[:80]})")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def belongs(proc, worker: Started) -> bool:
    """Whether a process is the worker or one it started."""
    try:
        if proc.pid == worker.pid:
            return True
        if worker.uid is not None and proc.info["uids"] and proc.info["uids"].real == worker.uid:
            return True
        if worker.namespace and pid_namespace(proc.pid) == worker.namespace:
            return True
        return proc.environ().get(TOKEN_VAR) == worker.token
    except psutil.Error:
        return False


def safe_cmdline(proc) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def sleepers(durations, since: float) -> list[int]:
    """Live `sleep N` processes (N among durations) started since `since`: what a hostile case left behind."""
    found = []
    for proc in psutil.process_iter(["cmdline", "create_time", "status"]):
        info = proc.info
        if info["status"] != psutil.STATUS_ZOMBIE and info["create_time"] + 1 >= since and (info["cmdline"] or [])[:1] == ["sleep"]:
            if info["cmdline"][1:2] and info["cmdline"][1] in durations:
                found.append(proc.pid)
    return found
