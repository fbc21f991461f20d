"""The worker's first lines: become the worker's own user if asked, then find its code and numpy.

Run as `python -I -S -B boot.py KIT UID [SITE ...]`: no site-packages, no .pth file and no
environment variable is read before the user changes, nothing is written as bytecode, and only
KIT (a private copy of the worker's modules, no reference code) and the SITE folders are searched.
"""

import os
import sys


def become(uid: int) -> None:
    """Drop every group and take this user for good (the grader started us as root)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def main() -> None:
    kit, uid, *sites = sys.argv[1:]
    if uid != "-":
        become(int(uid))
    sys.path[:0] = [kit]
    sys.path += sites
    from grader.sandbox.worker import main as serve

    serve()


if __name__ == "__main__":
    main()
