"""A worker's room: the worker's own code, with its bytecode compiled once per grader process and used only where it matches."""

import subprocess
import sys

from grader.paths import SOLUTIONS_DIR
from grader.sandbox.private import WORKER_MODULES, Room

LOADED = "import sys; sys.path.insert(0, sys.argv[1]); import grader.sandbox.frames"  # a worker module that needs no numpy


def loaded_from(kit) -> list[str]:
    """Where a worker's Python (same flags: -I -S -B) took grader.sandbox.frames' code from, as `python -v` says."""
    run = subprocess.run([sys.executable, "-I", "-S", "-B", "-v", "-c", LOADED, str(kit)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    return [line.rstrip("'") for line in run.stderr.splitlines() if line.startswith("# code object from") and "frames" in line]


def test_each_worker_module_comes_with_its_bytecode_which_the_worker_loads():
    room = Room(SOLUTIONS_DIR)
    try:
        cache = room.kit / "grader" / "sandbox" / "__pycache__"
        assert sorted(path.name.split(".")[0] for path in cache.iterdir()) == sorted(WORKER_MODULES)
        assert [line.endswith(".pyc") for line in loaded_from(room.kit)] == [True]
    finally:
        room.remove()


def test_bytecode_that_does_not_match_its_source_is_not_used():
    room = Room(SOLUTIONS_DIR)
    try:
        source = room.kit / "grader" / "sandbox" / "frames.py"
        source.write_text(source.read_text(encoding="utf-8") + "\nCHANGED = True\n", encoding="utf-8")
        assert [line.endswith("frames.py") for line in loaded_from(room.kit)] == [True]
    finally:
        room.remove()
