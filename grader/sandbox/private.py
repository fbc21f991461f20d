"""What a worker is given: exactly the five files of a submission and the worker's own code, in private folders.

Nothing else of the submission folder (a package folder beside a module, a __pycache__, a
conftest.py, an extra module) and nothing of the kit beyond the worker's modules is ever there.
"""

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from grader.paths import MODULES

SANDBOX_DIR = Path(__file__).resolve().parent
# The worker's code: no reference, no check; boot.py imports worker, which imports the rest.
WORKER_MODULES = ("__init__", "boot", "channel", "codec", "imports", "landlock", "limits", "messages", "session", "toymodel", "worker")
PACKAGE_INIT = '"""The worker\'s copy of the kit: only grader.sandbox\'s worker modules."""\n'


class NotRegular(Exception):
    """A module that is not a regular file (a symbolic link, a folder, a device); the message says which."""


def read_module(folder: Path, name: str) -> bytes:
    """The bytes of folder/name.py, refusing anything but a regular file, links included."""
    path = Path(folder) / f"{name}.py"
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    if path.is_symlink():
        raise NotRegular(f"{path.name} is a symbolic link: the grader grades regular files only, so replace the link with the file itself")
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise NotRegular(f"{path.name} cannot be read ({error.strerror}): check that it exists and that you may read it") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise NotRegular(f"{path.name} is not a regular file")
        return file.read()


def copy_modules(source: Path, target: Path) -> dict[str, str]:
    """Copy the five modules into target (made here, read-only to others); each file's sha256."""
    target.mkdir(mode=0o755)
    hashes = {}
    for name in MODULES:
        data = read_module(source, name)
        (target / f"{name}.py").write_bytes(data)
        os.chmod(target / f"{name}.py", 0o644)
        hashes[f"{name}.py"] = hashlib.sha256(data).hexdigest()
    return hashes


def copy_worker_code(target: Path) -> Path:
    """The worker's modules as a tiny `grader` package under target; the folder to put on sys.path."""
    package = target / "grader" / "sandbox"
    package.mkdir(parents=True, mode=0o755)
    os.chmod(target / "grader", 0o755)
    (target / "grader" / "__init__.py").write_text(PACKAGE_INIT, encoding="utf-8")
    for name in WORKER_MODULES:
        shutil.copyfile(SANDBOX_DIR / f"{name}.py", package / f"{name}.py")
    for path in [target / "grader" / "__init__.py", *package.iterdir()]:
        os.chmod(path, 0o644)
    return target


class Snapshot:
    """The five files of a submission as they were when grading began, with their sha256."""

    def __init__(self, folder: Path):
        self.root = Path(tempfile.mkdtemp(prefix="grader-snapshot-"))
        os.chmod(self.root, 0o711)
        try:
            self.hashes = copy_modules(Path(folder), self.root / "submission")
        except BaseException:
            self.close()
            raise
        self.folder = self.root / "submission"

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Room:
    """One worker's private folders: its code, its copy of the five files, and a home it may write."""

    def __init__(self, folder: Path, owner: int | None = None):
        self.root = Path(tempfile.mkdtemp(prefix="grader-worker-"))
        os.chmod(self.root, 0o711)  # the worker's user may pass through, not list
        self.kit = copy_worker_code(self.root / "kit")
        self.submission = self.root / "submission"
        copy_modules(Path(folder), self.submission)
        self.home = self.root / "home"
        self.home.mkdir(mode=0o700)
        if owner is not None:
            os.chown(self.home, owner, owner)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)
