"""In the worker: resource limits, and dying with the grader that started it."""

import ctypes
import os
import resource
import signal

MEMORY_BYTES = 4 << 30
CPU_SECONDS = 600
FILE_BYTES = 64 << 20


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

