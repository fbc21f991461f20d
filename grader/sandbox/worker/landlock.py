"""In the worker (Linux 5.13+): Landlock, so that it may read only Python and its copy and write only its home.

Used where the worker runs as a user of its own without namespaces: the user alone cannot keep it
from reading files every user may read (the kit's reference among them), Landlock can. Nothing
here needs privileges; once applied, it binds this process and all it starts, for good.
"""

import ctypes
import os
import struct

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
PATH_BENEATH = 1
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
ALL_V1 = (1 << 13) - 1  # every filesystem right of Landlock's first version
READ = EXECUTE | READ_FILE | READ_DIR
PR_SET_NO_NEW_PRIVS = 38


def restrict(readable: list[str], writable: list[str]) -> bool:
    """Allow reading only below `readable`, and everything only below `writable`; False where Landlock is missing."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    attr = struct.pack("Q", ALL_V1)
    ruleset = libc.syscall(CREATE_RULESET, attr, len(attr), 0)
    if ruleset < 0:
        return False
    try:
        for paths, rights in ((readable, READ), (writable, ALL_V1)):
            for path in paths:
                _allow(libc, ruleset, path, rights)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "Landlock could not be applied")
    finally:
        os.close(ruleset)
    return True


def _allow(libc, ruleset: int, path: str, rights: int) -> None:
    """One rule: these rights below path (a file gets only the rights a file can have)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # what does not exist needs no rule
    try:
        if not os.path.isdir(path):
            rights &= EXECUTE | READ_FILE | WRITE_FILE
        rule = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr is packed
        if libc.syscall(ADD_RULE, ruleset, PATH_BENEATH, rule, 0) != 0:
            raise OSError(ctypes.get_errno(), f"Landlock refused a rule for {path}")
    finally:
        os.close(fd)
