"""In the worker (Linux 5.13+): Landlock, at the best ABI the kernel offers, and no capability left.

Files (ABI 1, more rights from 2, 3 and 5): read only Python and its copy, write only its home.
Network (ABI 4): no TCP bind or connect. Scoping (ABI 6): no signal and no abstract unix socket
reaching a process outside its own domain (the grader's among them, where the worker is the grader's
user). Nothing here needs privileges; once applied, it binds this process and all it starts, for good.
"""

import ctypes
import os
import struct

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
CAPSET = {"x86_64": 126, "aarch64": 91}  # capset(2), for dropping every capability
PATH_BENEATH = 1
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
MAKE_CHAR, MAKE_BLOCK = 1 << 7, 1 << 11
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
# the rights a rule on a file (not a folder) may carry
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = EXECUTE | READ_FILE | READ_DIR
TCP = 0b11  # LANDLOCK_ACCESS_NET_BIND_TCP | CONNECT_TCP
SCOPES = 0b11  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | SIGNAL
PR_SET_NO_NEW_PRIVS = 38
CAPABILITY_V3 = 0x20080522


def handled(abi: int) -> tuple[int, int, int]:
    """(filesystem rights, network rights, scopes) that Landlock of this ABI can refuse."""
    files = (1 << 13) - 1
    for since, right in ((2, REFER), (3, TRUNCATE), (5, IOCTL_DEV)):
        if abi >= since:
            files |= right
    return files, TCP if abi >= 4 else 0, SCOPES if abi >= 6 else 0


def ruleset_attr(abi: int) -> bytes:
    """struct landlock_ruleset_attr as this ABI knows it: 8 bytes at ABI 1-3, 16 from 4, 24 from 6."""
    files, network, scoped = handled(abi)
    return (
        struct.pack("Q", files)
        + (struct.pack("Q", network) if abi >= 4 else b"")
        + (struct.pack("Q", scoped) if abi >= 6 else b"")
    )


def restrict(readable: list[str], writable: list[str], abi: int = 1, listable=()) -> bool:
    """Allow reading only below `readable`, listing `listable`, and writing only below `writable` (no device nodes),
    with the rights of this ABI: no TCP from 4, no signal or abstract socket outside from 6. False without Landlock."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    attr = ruleset_attr(abi)
    ruleset = libc.syscall(CREATE_RULESET, attr, len(attr), 0)
    if ruleset < 0:
        return False
    try:
        files = handled(abi)[0]
        for paths, rights in (
            (readable, READ),
            (listable, READ_DIR),
            (writable, files & ~(MAKE_CHAR | MAKE_BLOCK)),
        ):
            for path in paths:
                _allow(libc, ruleset, path, rights)
        if (
            libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            or libc.syscall(RESTRICT_SELF, ruleset, 0) != 0
        ):
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
            rights &= FILE_RIGHTS
        rule = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr is packed
        if libc.syscall(ADD_RULE, ruleset, PATH_BENEATH, rule, 0) != 0:
            raise OSError(ctypes.get_errno(), f"Landlock refused a rule for {path}")
    finally:
        os.close(fd)


def drop_capabilities() -> None:
    """Give up every capability this process holds (a grader run as root would pass them on): capset to nothing."""
    number = CAPSET.get(os.uname().machine)
    if number is None:
        raise OSError(f"capset's number is not known on {os.uname().machine}")
    libc = ctypes.CDLL(None, use_errno=True)
    header = struct.pack("Ii", CAPABILITY_V3, 0)
    # two struct __user_cap_data_struct, all zero: no effective, permitted or inheritable capability
    data = bytes(24)
    if libc.syscall(number, header, data) != 0:
        raise OSError(ctypes.get_errno(), "the worker's capabilities could not be dropped")
