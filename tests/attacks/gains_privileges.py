# module: softmax
"""Tries to become root, to make a user namespace of its own, and to remount what it sees writable."""

import ctypes
import os


def softmax(x):
    libc = ctypes.CDLL(None, use_errno=True)
    tries = []
    for attempt in (lambda: os.setuid(0), lambda: os.setgid(0)):
        try:
            attempt()
            tries.append("setuid worked")
        except OSError as error:
            tries.append(str(error))
    tries.append(f"unshare {libc.unshare(0x10000000)}")  # CLONE_NEWUSER
    # MS_REMOUNT | MS_BIND
    tries.append(f"mount {libc.mount(b'none', b'/usr', None, 32 | 4096, None)}")
    try:
        open("/usr/abh-attack", "w").write("x")
        tries.append("wrote /usr")
    except OSError as error:
        tries.append(str(error))
    raise RuntimeError("; ".join(tries))
