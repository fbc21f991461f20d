"""The autograde kernel's first lines: bound its memory, become the kernel's own user, then start the kernel.

Run as `python -I -S kernel_boot.py BYTES UID -- KERNEL_COMMAND ...` (inside bubblewrap where the
kernel is confined; UID is "-" where nbgrader is not root and no user is changed): no site-packages
and no environment variable is read before the limit is set and the user changes. The address-space
limit holds the kernel and every process it starts, which cannot raise it.
"""

import os
import resource
import sys


def main() -> None:
    size, uid, separator, *command = sys.argv[1:]
    if separator != "--" or not command:
        sys.exit("usage: kernel_boot.py BYTES UID|- -- COMMAND ...")
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = int(size) if hard == resource.RLIM_INFINITY else min(int(size), hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if uid != "-":
        os.setgroups([])
        os.setresgid(int(uid), int(uid), int(uid))
        os.setresuid(int(uid), int(uid), int(uid))
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
