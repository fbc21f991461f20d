"""The first lines of every process that runs student code: become its own user, confine its view of the files, then run.

Run as `python -I -S -B boot.py KIT CONFIG`: no site-packages, no .pth file and no environment
variable is read before this, nothing is written as bytecode, and only KIT (a private copy of this
package, and of compare's job where that is what runs; no reference code) and CONFIG's site folders
are searched. CONFIG is JSON: {"uid": a user to become or null, "sites": [...], "landlock":
{"read": [...], "write": [...]} or null, "main": the module whose main(landlocked) runs}.
"""

import importlib
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
        from grader.sandbox.worker.landlock import restrict

        landlocked = restrict(config["landlock"]["read"], config["landlock"]["write"])
    importlib.import_module(config["main"]).main(landlocked)


if __name__ == "__main__":
    main()
