"""The confined kernel's first lines: become the kernel's own user, then start the kernel.

Run inside bubblewrap as `python -I -S kernel_boot.py UID -- KERNEL_COMMAND ...` when nbgrader runs
as root: no site-packages and no environment variable is read before the user changes.
"""

import os
import sys


def main() -> None:
    uid, separator, *command = sys.argv[1:]
    if separator != "--" or not command:
        sys.exit("usage: kernel_boot.py UID -- COMMAND ...")
    os.setgroups([])
    os.setresgid(int(uid), int(uid), int(uid))
    os.setresuid(int(uid), int(uid), int(uid))
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
