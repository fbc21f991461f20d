"""What a worker is given: exactly the five files of a submission and the worker's own code, in private folders.

Nothing else of the submission folder (a package folder beside a module, a __pycache__, a
conftest.py, an extra module) and nothing of the kit beyond the worker's modules is ever there.
"""

import errno
import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from grader.paths import MODULES
from grader.sandbox.errors import NotRegular

# what runs in the worker, copied whole: no reference, no check
WORKER_DIR = Path(__file__).resolve().parent / "worker"
PACKAGE_INITS = {
    "grader": '"""The worker\'s copy of the kit: grader.sandbox.worker alone."""\n',
    "grader/sandbox": '"""The worker\'s copy of the sandbox: its worker package alone."""\n',
}


READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_BINARY", 0)
)
LINK = "{} is a symbolic link: the grader grades regular files only, so replace the link with the file itself"


def read_module(folder: Path, name: str) -> bytes:
    """The bytes of folder/name.py, refusing anything but a regular file, links included.

    The one reader of a student's module: opened without following a link (O_NOFOLLOW; a FIFO
    does not block, O_NONBLOCK), then judged by what was opened (fstat), so nothing can be swapped
    in between a look and the read. Where O_NOFOLLOW does not exist (Windows) the opened file must
    be the very one the path names, not a link's target.
    """
    path = Path(folder) / f"{name}.py"
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as error:
        if error.errno == errno.ELOOP or os.path.islink(path):
            raise NotRegular(LINK.format(path.name)) from None
        raise NotRegular(
            f"{path.name} cannot be read ({error.strerror}): check that it exists and that you may read it"
        ) from None
    with os.fdopen(fd, "rb") as file:
        opened = os.fstat(file.fileno())
        if not stat.S_ISREG(opened.st_mode):
            raise NotRegular(f"{path.name} is not a regular file")
        if not getattr(os, "O_NOFOLLOW", 0) and not os.path.samestat(opened, os.lstat(path)):
            raise NotRegular(LINK.format(path.name))
        return file.read()


def regular(folder: Path, name: str) -> None:
    """Raise NotRegular unless folder/name.py is a regular file, by a look at it (lstat) that reads nothing."""
    path = Path(folder) / f"{name}.py"
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise NotRegular(
            f"{path.name} cannot be read ({error.strerror}): check that it exists and that you may read it"
        ) from None
    if stat.S_ISLNK(mode):
        raise NotRegular(LINK.format(path.name))
    if not stat.S_ISREG(mode):
        raise NotRegular(f"{path.name} is not a regular file")


def write_modules(files: dict[str, bytes], target: Path) -> None:
    """Write {name.py: bytes} into target (made here if need be, read-only to others)."""
    target.mkdir(mode=0o755, exist_ok=True)
    for name, data in files.items():
        (target / name).write_bytes(data)
        os.chmod(target / name, 0o644)


def copy_modules(source: Path, target: Path) -> dict[str, str]:
    """Copy the five modules into target (made here, read-only to others); each file's sha256."""
    files = {f"{name}.py": read_module(source, name) for name in MODULES}
    write_modules(files, target)
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}


def copy_worker_code(target: Path) -> Path:
    """grader/sandbox/worker/ (its .py files, no bytecode) inside a tiny `grader` package under target; the folder to put on sys.path."""
    shutil.copytree(
        WORKER_DIR,
        target / "grader" / "sandbox" / "worker",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        copy_function=shutil.copyfile,
    )
    for package, text in PACKAGE_INITS.items():
        (target / package / "__init__.py").write_text(text, encoding="utf-8")
    for folder, _, files in os.walk(target):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(Path(folder) / name, 0o644)
    return target


class Snapshot:
    """The five files of a submission as they were when grading began: read once, their bytes, their sha256 and a copy.

    Everything a run says about the files (the verdict cache's fingerprint, the JSON's sha256)
    comes from these bytes, and the workers are given this copy, never the live folder.
    """

    def __init__(self, folder: Path):
        self.source = Path(folder).resolve()  # the folder it was read from
        # the one read of each file
        self.files = {f"{name}.py": read_module(Path(folder), name) for name in MODULES}
        self.hashes = {name: hashlib.sha256(data).hexdigest() for name, data in self.files.items()}
        self.root = Path(tempfile.mkdtemp(prefix="grader-snapshot-"))
        os.chmod(self.root, 0o711)
        self.folder = self.root / "submission"
        try:
            write_modules(self.files, self.folder)
        except BaseException:
            self.close()
            raise

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Room:
    """One worker's private folders: its code, its copy of the five files, and a home it may write.

    folder None: no copy, for the isolation probe's worker, which grades nothing.
    """

    def __init__(self, folder: Path | None, owner: int | None = None):
        self.root = Path(tempfile.mkdtemp(prefix="grader-worker-"))
        os.chmod(self.root, 0o711)  # the worker's user may pass through, not list
        self.kit = copy_worker_code(self.root / "kit")
        self.submission = self.root / "submission"
        self.submission.mkdir(mode=0o755)
        if folder is not None:
            copy_modules(Path(folder), self.submission)
        self.home = self.root / "home"
        self.home.mkdir(mode=0o700)
        if owner is not None:
            os.chown(self.home, owner, owner)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)
