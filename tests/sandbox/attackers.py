"""What the attack tests share: the attack folders, honest neighbours, and digests of what must not change."""

import hashlib
import importlib.util
import marshal
import shutil
import socket
import threading
from pathlib import Path

import pytest

from grader.course.stubs import write_stubs
from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox import isolation

ATTACKS = Path(__file__).resolve().parents[1] / "attacks"
SECRET = "abh-instructor-token-7f3e9c"
PLANTED = (
    "extra_modules",
    "planted_pyc_unchecked",
    "planted_pyc_timestamp",
    "package_beside_module",
)
REFUSED = ("symlink_to_reference_file", "symlink_to_reference_folder")


def require_isolation():
    tier = isolation.choose().name
    if tier == "none":
        pytest.fail(
            "this machine cannot confine student code (bubblewrap namespaces or root): the attacks are not run. "
            + "; ".join(f"{t}: {isolation.why_not(t)}" for t in ("namespaces", "user"))
        )
    return tier


def stubs(folder: Path) -> Path:
    return write_stubs(folder)


def attack(root: Path, path: Path, port: int) -> Path:
    """The stubs with one module replaced by the attack file."""
    module = path.read_text(encoding="utf-8").splitlines()[0].removeprefix("# module: ").strip()
    folder = stubs(root / path.stem)
    (folder / f"{module}.py").write_text(
        path.read_text(encoding="utf-8").replace("PORT = 0", f"PORT = {port}"), encoding="utf-8"
    )
    return folder


def pyc(source: bytes, header: bytes) -> bytes:
    return header + marshal.dumps(compile(source, "softmax.py", "exec"))


def planted(root: Path) -> list[Path]:
    """Cases that plant files beside the stubs: extra modules, bytecode of the reference, a package."""
    reference = (SOLUTIONS_DIR / "softmax.py").read_bytes()
    folders = [stubs(root / name) for name in PLANTED]
    extra, unchecked, timestamp, package = folders
    (extra / "__init__.py").write_text(
        "import importlib, sys\nsys.modules['_submission.softmax'] = importlib.import_module('solutions.softmax')\n"
    )
    (extra / "sitecustomize.py").write_text("import builtins\nbuiltins.__import__ = None\n")
    cache = Path(importlib.util.cache_from_source(str(unchecked / "softmax.py")))
    cache.parent.mkdir()
    cache.write_bytes(
        pyc(reference, importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + b"\0" * 8)
    )
    stat = (timestamp / "softmax.py").stat()
    cache = Path(importlib.util.cache_from_source(str(timestamp / "softmax.py")))
    cache.parent.mkdir()
    header = (
        importlib.util.MAGIC_NUMBER
        + b"\0" * 4
        + int(stat.st_mtime).to_bytes(4, "little")
        + (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    )
    cache.write_bytes(pyc(reference, header))
    (package / "softmax").mkdir()
    (package / "softmax" / "__init__.py").write_bytes(reference)
    return folders


def refused(root: Path) -> list[Path]:
    """A module linked to the reference, and a folder that is a link to the reference folder."""
    linked = stubs(root / REFUSED[0])
    (linked / "softmax.py").unlink()
    (linked / "softmax.py").symlink_to(SOLUTIONS_DIR / "softmax.py")
    (root / REFUSED[1]).symlink_to(SOLUTIONS_DIR, target_is_directory=True)
    return [linked, root / REFUSED[1]]


def honest(root: Path) -> list[Path]:
    good = root / "honest_good"
    shutil.copytree(SOLUTIONS_DIR, good, ignore=shutil.ignore_patterns("__pycache__"))
    partial = root / "honest_partial"
    shutil.copytree(SOLUTIONS_DIR, partial, ignore=shutil.ignore_patterns("__pycache__"))
    (partial / "softmax.py").write_text(
        "import numpy as np\n\ndef softmax(x):\n    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)\n"
    )
    return [good, partial]


def digest(paths) -> dict[str, str]:
    """sha256 of every file under these paths (no bytecode caches)."""
    found = {}
    for top in paths:
        for path in sorted(Path(top).rglob("*")) if Path(top).is_dir() else [Path(top)]:
            if path.is_file() and "__pycache__" not in path.parts and ".grader" not in path.parts:
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def kit_and_site() -> dict[str, str]:
    """The kit's own files and the names of every .pth file in site-packages."""
    kit = digest(
        [KIT_ROOT / name for name in ("grader", "solutions", "exercises", "data", "pyproject.toml")]
    )
    for folder in isolation.site_dirs():
        kit.update({str(p): "pth" for p in Path(folder).glob("*.pth")})
    kit.update(
        {
            str(p): "pyc"
            for p in (KIT_ROOT / "grader").rglob("*.pyc")
            if "abh" in p.read_bytes().decode("latin1")
        }
    )
    return kit


class Listener:
    """A server on the machine that counts the connections an attack manages to make."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port, self.received = self.socket.getsockname()[1], []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.received.append(connection.recv(100))
            connection.close()
