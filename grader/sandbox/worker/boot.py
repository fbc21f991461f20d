"""The worker's first lines: become the worker's own user, confine its view of the files, then find its code.

Run as `python -I -S -B boot.py KIT CONFIG`: no site-packages, no .pth file and no environment
variable is read before this, nothing is written as bytecode, and only KIT (a private copy of the
worker's modules, no reference code) and CONFIG's site folders are searched. CONFIG is JSON:
{"uid": a user to become or null, "sites": [...], "landlock": {"read": [...], "write": [...]} or null}.
"""

import json
import os
import sys


def become(uid: int) -> None:
    """Drop every group and take this user for good (the grader started us as root)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def main() -> None:
    kit, config = sys.argv[1], json.loads(sys.argv[2])
    if config["uid"] is not None:
        become(config["uid"])
    sys.path[:0] = [kit]
    sys.path += config["sites"]
    landlocked = False
    if config.get("landlock"):
        from grader.sandbox.landlock import restrict

        landlocked = restrict(config["landlock"]["read"], config["landlock"]["write"])
    from grader.sandbox.worker import main as serve

    serve(landlocked)


if __name__ == "__main__":
    main()
