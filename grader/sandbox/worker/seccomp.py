"""In the worker (Linux): load the seccomp filter the grader built (grader.sandbox.seccomp), for good.

The grader hands over BPF bytes in a file of the worker's room; loading them needs no privilege
once no_new_privs is set, and binds this process and every thread it starts from then on.
"""

import ctypes

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
INSTRUCTION = 8  # bytes of one struct sock_filter


class Program(ctypes.Structure):
    """struct sock_fprog: how many instructions, and where they are."""

    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(path: str) -> None:
    """Load the filter at path for this process; OSError if the kernel refuses it."""
    with open(path, "rb") as file:
        data = file.read()
    if not data or len(data) % INSTRUCTION:
        raise OSError(f"{path} holds no seccomp filter")
    libc = ctypes.CDLL(None, use_errno=True)
    code = ctypes.create_string_buffer(data, len(data))
    program = Program(len(data) // INSTRUCTION, ctypes.cast(code, ctypes.c_void_p))
    if (
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        or libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0
    ):
        raise OSError(ctypes.get_errno(), "the seccomp filter could not be loaded")
