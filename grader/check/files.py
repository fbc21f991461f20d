"""Which module files an exercise's verdict depends on: its own, those it builds on, and what they import."""

import hashlib
from collections.abc import Mapping
from pathlib import Path

from grader.exercises import BY_NAME
from grader.paths import MODULES
from grader.sandbox.private import NotRegular, read_module
from grader.sandbox.worker.imports import siblings


def read_modules(folder: Path) -> dict[str, bytes | None]:
    """{name.py: bytes} of the five modules, each read once by the one reader (None for one it refuses)."""
    found: dict[str, bytes | None] = {}
    for module in MODULES:
        try:
            found[f"{module}.py"] = read_module(folder, module)
        except NotRegular:
            found[f"{module}.py"] = None
    return found


def depends_on(files: Mapping[str, bytes | None], exercise: str) -> list[str]:
    """The modules an exercise's verdict depends on: its own, those it builds on, and those they import.

    files: {name.py: bytes} as read once (a snapshot's, or read_modules'); imports found by the syntax tree.
    """
    todo, seen = [exercise, *BY_NAME[exercise].uses], set()
    while todo:
        module = todo.pop()
        if module in seen or module not in MODULES:
            continue
        seen.add(module)
        todo.extend(siblings(files.get(f"{module}.py") or b"") or ())
    return sorted(seen)


def hashes_for(files: Mapping[str, bytes | None], exercise: str) -> dict[str, str]:
    """{name.py: sha256} of each module an exercise's verdict depends on, of these files (one that was refused: "<missing>")."""
    found = {f"{m}.py": files.get(f"{m}.py") for m in depends_on(files, exercise)}
    return {
        name: hashlib.sha256(data).hexdigest() if data is not None else "<missing>"
        for name, data in found.items()
    }
