"""Attacks on the grades (tests/attacks/): graded with `grader batch` beside honest submissions, as a course would.

What must hold afterwards: every attack earns exactly what its honest work earns (nothing);
the honest submissions get their own scores, their files untouched; the kit, site-packages and
the CSV are as the grader made them; no process of any attack survives; no secret of the
grader's environment reaches the CSV. These need isolation: where the machine cannot confine
the students' code, the test says so and fails (it never runs an attack unconfined).
"""

import csv
import hashlib
import importlib.util
import json
import marshal
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import unicodedata
from pathlib import Path

import psutil
import pytest

from grader.course.stubs import write_stubs
from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox import isolation

ATTACKS = Path(__file__).resolve().parent / "attacks"
SECRET = "abh-instructor-token-7f3e9c"
OWN_USERS = range(1 << 30, 1 << 31)
PLANTED = ("extra_modules", "planted_pyc_unchecked", "planted_pyc_timestamp", "package_beside_module")
REFUSED = ("symlink_to_reference_file", "symlink_to_reference_folder")

pytestmark = pytest.mark.linux("the attacks use /proc, fork and POSIX signals, and only Linux confines them")


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
    (folder / f"{module}.py").write_text(path.read_text(encoding="utf-8").replace("PORT = 0", f"PORT = {port}"), encoding="utf-8")
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
    cache.write_bytes(pyc(reference, importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + b"\0" * 8))
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
    kit = digest([KIT_ROOT / name for name in ("grader", "solutions", "exercises", "data", "pyproject.toml")])
    for folder in isolation.site_dirs():
        kit.update({str(p): "pth" for p in Path(folder).glob("*.pth")})
    kit.update({str(p): "pyc" for p in (KIT_ROOT / "grader").rglob("*.pyc") if "abh" in p.read_bytes().decode("latin1")})
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


def survivors(since: float) -> list[str]:
    """Processes of a worker's own user, or started by an attack, still alive."""
    found = []
    for proc in psutil.process_iter(["pid", "uids", "cmdline", "create_time", "status"]):
        info = proc.info
        if info["status"] == psutil.STATUS_ZOMBIE or info["create_time"] + 1 < since:
            continue
        if (info["uids"] and info["uids"].real in OWN_USERS) or "abh-attack" in " ".join(info["cmdline"] or []):
            found.append(f"{info['pid']} {' '.join(info['cmdline'] or [])[:60]}")
    return found


def test_no_attack_gains_a_point_or_touches_anything_else(tmp_path):
    tier = require_isolation()
    root, listener = tmp_path / "submissions", Listener()
    root.mkdir()
    cases = [attack(root, path, listener.port) for path in sorted(ATTACKS.glob("*.py"))]
    cases += planted(root) + refused(root)
    good, partial = honest(root)
    folders = [good, *cases, partial]
    honest_files, before, started = digest([good, partial]), kit_and_site(), time.time()
    csv_file = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "grader", "batch", *map(str, folders), "--jobs", "2", "--csv", str(csv_file)]
    run = subprocess.run(
        command, capture_output=True, text=True, timeout=900, cwd=tmp_path, env={**os.environ, "INSTRUCTOR_TOKEN": SECRET, "NO_COLOR": "1"}
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    time.sleep(1.0)  # a daemon that escaped would rewrite the CSV within 0.1 s
    text = csv_file.read_text(encoding="utf-8")
    rows = {r["student"]: r for r in csv.DictReader(text.splitlines())}
    assert len(rows) == len(folders) and "forged" not in text and SECRET not in text
    for folder in cases:
        name = folder.name
        got = rows[name]
        if name in REFUSED:
            assert got["status"] == "unreadable" and ("link" in got["reason"] or "reference folder" in got["reason"]), (name, got)
        else:
            assert (got["status"], got["total"], got["isolation"]) == ("graded", "0.0", tier), (name, got["reason"][:300])
    assert rows["honest_good"]["status"] == "passed" and rows["honest_good"]["total"] == "100.0"
    assert rows["honest_partial"]["total"] == alone(partial, tmp_path)
    assert digest([good, partial]) == honest_files
    assert kit_and_site() == before
    assert listener.received == []
    assert survivors(started) == []
    assert not list(Path("/tmp").glob("abh-attack*")) and not list(Path("/var/tmp").glob("abh-attack*"))


def alone(folder: Path, tmp_path: Path) -> str:
    """A submission's total when `grader check` grades it by itself."""
    out = tmp_path / "alone.json"
    subprocess.run(
        [sys.executable, "-m", "grader", "check", "--submission", str(folder), "--json", str(out)],
        capture_output=True,
        timeout=300,
        cwd=tmp_path,
    )
    return f"{json.loads(out.read_text())['total']['points']:.1f}"


def test_terminal_escapes_from_student_code_reach_no_terminal_and_no_csv(tmp_path):
    """What student code prints or raises is shown with its control characters escaped: no forged screen, in check or batch."""
    require_isolation()
    folder = attack(tmp_path, ATTACKS / "forges_the_terminal.py", 0)
    out, csv_file = tmp_path / "result.json", tmp_path / "grades.csv"
    run = subprocess.run(
        [sys.executable, "-m", "grader", "check", "softmax", "--submission", str(folder), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
    )
    batch = subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(folder), "--csv", str(csv_file)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
    )
    shown = run.stdout + run.stderr + batch.stdout + batch.stderr + csv_file.read_text(encoding="utf-8")
    assert not [c for c in shown if unicodedata.category(c) == "Cc" and c not in "\n\r\t"], shown[:2000]
    assert "\\x1b[2J" in run.stdout and "raised ValueError" in run.stdout  # escaped, there to read
    assert run.returncode == 1 and json.loads(out.read_text())["total"]["points"] == 0.0


def test_a_huge_reply_is_refused_without_the_grader_growing(tmp_path):
    require_isolation()
    folder = attack(tmp_path, ATTACKS / "huge_reply.py", 0)
    out = tmp_path / "result.json"
    start, peak = time.monotonic(), 0
    grader = subprocess.Popen(
        [sys.executable, "-m", "grader", "check", "softmax", "--submission", str(folder), "--json", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    watched = psutil.Process(grader.pid)
    while grader.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    assert time.monotonic() - start < 60 and peak < 400 << 20, (time.monotonic() - start, peak >> 20)
    messages = [c["message"] for c in json.loads(out.read_text())["exercises"][0]["checks"]]
    assert any("far more than this call should return" in m for m in messages), messages[:1]


def test_the_json_of_a_check_is_the_graders_and_carries_no_secret(tmp_path):
    require_isolation()
    out = tmp_path / "result.json"
    for name in ("environment_leak", "daemon_rewrites_results", "writes_results"):
        folder = attack(tmp_path, ATTACKS / f"{name}.py", 0)
        run = subprocess.run(
            [sys.executable, "-m", "grader", "check", "--submission", str(folder), "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env={**os.environ, "INSTRUCTOR_TOKEN": SECRET},
        )
        time.sleep(1.0)  # a daemon that escaped rewrites the JSON within 0.1 s
        text = out.read_text(encoding="utf-8")
        assert run.returncode == 1 and SECRET not in text + run.stdout, name
        assert json.loads(text)["total"]["points"] == 0.0 and not (tmp_path / "results.json").exists(), name
