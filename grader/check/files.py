"""Which module files an exercise's verdict depends on: its own, those it builds on, and what they import."""

import re
from pathlib import Path

from grader.exercises import BY_NAME
from grader.paths import MODULES

RELATIVE_IMPORT = re.compile(r"^\s*from\s+\.(\w*)\s+import\s+\(?([\w\s,]*)", re.MULTILINE)


def read(folder: Path, module: str) -> bytes | None:
    """A module file's bytes, or None when it cannot be read."""
    try:
        return (folder / f"{module}.py").read_bytes()
    except OSError:
        return None


def depends_on(folder: Path, exercise: str) -> list[str]:
    """The modules an exercise's verdict depends on: its own, those it builds on, and those they import."""
    todo, seen = [exercise, *BY_NAME[exercise].uses], set()
    while todo:
        module = todo.pop()
        if module in seen or module not in MODULES:
            continue
        seen.add(module)
        text = (read(folder, module) or b"").decode("utf-8", errors="replace")
        for name, names in RELATIVE_IMPORT.findall(text):
            todo.extend([name] if name else re.findall(r"\w+", names))
    return sorted(seen)
