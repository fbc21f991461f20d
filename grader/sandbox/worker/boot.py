"""The first lines of every process that runs student code: become its own user, confine its view of the files, then run.

Run as `python -I -S -B boot.py KIT CONFIG`: no site-packages, no .pth file and no environment
variable is read before this, nothing is written as bytecode, and only KIT (a private copy of this
package, and of compare's job where that is what runs; no reference code) and CONFIG's site folders
are searched. CONFIG is JSON: {"uid": a user to become or null, "sites": [...], "landlock":
{"read": [...], "list": [...], "write": [...], "abi": N, "capabilities": false to drop them} or null, "seccomp":
the file of a seccomp filter to load or null, "main": the module whose main(landlocked) runs}.
Landlock comes before the filter (which refuses nothing it needs), both before any student code.
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
    landlocked = bool(config.get("landlock")) and confine(config["landlock"])
    if config.get("seccomp"):
        from grader.sandbox.worker.seccomp import install

        install(config["seccomp"])
    importlib.import_module(config["main"]).main(landlocked)


def confine(view: dict) -> bool:
    """Landlock at the ABI the grader asked for, and no capability where asked; False where the kernel has no Landlock."""
    from grader.sandbox.worker.landlock import drop_capabilities, restrict

    if view.get("capabilities") is False:
        drop_capabilities()
    return restrict(view["read"], view["write"], view.get("abi", 1), view.get("list", ()))


if __name__ == "__main__":
    main()
