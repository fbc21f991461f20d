"""For the kit's tests: every worker a test starts, and whatever of it is still running afterwards."""

import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from grader.sandbox import process
from grader.sandbox.tree import TOKEN_VAR, end_processes


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
                children = (
                    psutil.Process(self.process.pid).children()
                    if self.process.poll() is None
                    else []
                )
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
        if (
            info["status"] != psutil.STATUS_ZOMBIE
            and info["create_time"] + 1 >= since
            and (info["cmdline"] or [])[:1] == ["sleep"]
        ):
            if info["cmdline"][1:2] and info["cmdline"][1] in durations:
                found.append(proc.pid)
    return found


# Runs argv[3:] with its output into the files argv[1:3], adopting every orphan below it (PR_SET_CHILD_SUBREAPER is 36);
# prints the command's exit status, then reaps whatever ends until its stdin closes.
ADOPTER = """
import ctypes, os, select, subprocess, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit(f"cannot adopt orphans: {os.strerror(ctypes.get_errno())}")
out, err, *command = sys.argv[1:]
with open(out, "wb") as stdout, open(err, "wb") as stderr:
    pid = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr).pid
while (ended := os.waitpid(-1, 0))[0] != pid:
    pass
print(os.waitstatus_to_exitcode(ended[1]), flush=True)
while not select.select([sys.stdin], [], [], 0.1)[0]:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
"""


class Adopted:
    """A command run under a process that adopts every orphan below it (Linux's child subreaper): whatever the command
    leaves running stays below that process, whatever user, session, environment or command line it takes on, and no
    other program's process ever is there. So a test finds its own survivors only, beside any other grading."""

    def __init__(self, command: list[str], folder: Path, *, timeout: float, **popen):
        out, err = folder / "adopted.out", folder / "adopted.err"
        argv = [sys.executable, "-I", "-c", ADOPTER, str(out), str(err), *map(str, command)]
        self.adopter = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **popen,
        )
        if not select.select([self.adopter.stdout], [], [], timeout)[0]:
            self.close()
            raise subprocess.TimeoutExpired(command, timeout)
        line = self.adopter.stdout.readline()
        self.stdout, self.stderr = (
            path.read_text(encoding="utf-8", errors="replace") for path in (out, err)
        )
        if not line.strip().lstrip("-").isdigit():  # it ended without the command's status
            self.close()
            raise RuntimeError(f"the adopter failed: {self.adopter.stderr.read()[-2000:]}")
        self.returncode = int(line)

    def left(self) -> list[psutil.Process]:
        """The processes below the adopter, zombies aside (none once it has ended)."""
        try:
            found = (
                psutil.Process(self.adopter.pid).children(recursive=True)
                if self.adopter.poll() is None
                else []
            )
        except psutil.Error:
            return []
        return [proc for proc in found if status(proc) not in (psutil.STATUS_ZOMBIE, None)]

    def survivors(self, wait: float = 2.0) -> list[str]:
        """What the command left running, after up to `wait` seconds for it to end: pid, user and command line of each."""
        if (
            self.adopter.poll() is not None
        ):  # its orphans have gone to the system's init, among everyone else's
            raise AssertionError(
                f"the process adopting the command's orphans was ended (status {self.adopter.returncode})"
            )
        deadline = time.monotonic() + wait
        while (left := self.left()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return [
            f"{proc.pid} uid {uid(proc)} ({' '.join(safe_cmdline(proc))[:80]})" for proc in left
        ]

    def close(self) -> None:
        """Kill whatever is left and end the adopter."""
        end_processes(self.left())
        self.adopter.stdin.close()
        try:
            self.adopter.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.adopter.kill()
            self.adopter.wait()
        self.adopter.stdout.close()
        self.adopter.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def living(procs: list[psutil.Process]) -> list[int]:
    """The pids of those still running (a zombie its parent has yet to reap is not)."""
    return [proc.pid for proc in procs if status(proc) not in (psutil.STATUS_ZOMBIE, None)]


def status(proc: psutil.Process) -> str | None:
    try:
        return proc.status()
    except psutil.Error:
        return None


def uid(proc: psutil.Process) -> int | None:
    try:
        return proc.uids().real
    except psutil.Error:
        return None
