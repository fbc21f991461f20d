"""Modules that are the stubs as given: their functions still raise NotImplementedError, which needs no worker to see.

A new student's first `grader` runs the checks on five untouched stubs: a stub's every function
raises NotImplementedError at once, so each check of an exercise whose module, and every module it
depends on, is a stub is "not started" by what its file is. stubs.json holds the stubs' digests
(written by `python -m grader.course.stubs`, checked by tests/course/test_stubs.py).
"""

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from grader.check.files import depends_on
from grader.paths import MODULES

STUBS = Path(__file__).resolve().parent / "stubs.json"


def digest(source: bytes) -> str:
    """The sha256 of a module's text with its line ends as \\n (a Windows checkout writes \\r\\n)."""
    return hashlib.sha256(source.replace(b"\r\n", b"\n")).hexdigest()


@functools.cache
def stub_digests() -> dict[str, str]:
    """Each module's stub digest; none where the file is missing or damaged (then every module is run)."""
    try:
        found = json.loads(STUBS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def unwritten(files: Mapping[str, bytes | None]) -> set[str]:
    """The modules that are stubs and depend on stubs only, so that importing one and calling it raises NotImplementedError."""
    stubs = {m for m in MODULES if (source := files.get(f"{m}.py")) is not None and digest(source) == stub_digests().get(m)}
    return {m for m in stubs if set(depends_on(files, m)) <= stubs}
