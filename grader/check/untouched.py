"""Modules untouched since the kit gave them: their functions still raise NotImplementedError, which needs no worker to see.

A new student's first `grader` runs the checks on five untouched stubs: a stub's every function
raises NotImplementedError at once, so each check of an exercise whose module, and every module it
depends on, is a stub is "not started" by what its file is. stubs.json holds the stubs' digests,
not_started.json the public checks' verdicts on them, each message as the check gave it (both
written by `python -m grader.course.stubs`, checked by tests/course/test_stubs.py): a stub's public
checks end as recorded, with no check run and no worker.
"""

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from grader.check.files import depends_on
from grader.check.results import (
    CheckResult,
    ExerciseResult,
    exercise_status,
    function_points,
    partial_points,
)
from grader.exercises import BY_NAME
from grader.paths import CHECKS_DIR, MODULES

STUBS = Path(__file__).resolve().parent / "stubs.json"
RECORD = Path(__file__).resolve().parent / "not_started.json"


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


def untouched_stubs(files: Mapping[str, bytes | None]) -> set[str]:
    """The modules that are stubs and depend on stubs only, so that importing one and calling it raises NotImplementedError."""
    stubs = {
        m
        for m in MODULES
        if (source := files.get(f"{m}.py")) is not None and digest(source) == stub_digests().get(m)
    }
    return {m for m in stubs if set(depends_on(files, m)) <= stubs}


def record_digest() -> str:
    """A digest of what the record's verdicts depend on: the stubs, and the public checks with all they run on (hidden/ aside)."""
    found = hashlib.sha256(json.dumps(stub_digests(), sort_keys=True).encode())
    for path in sorted(CHECKS_DIR.rglob("*.py")):
        if "hidden" not in path.relative_to(CHECKS_DIR).parts:
            found.update(
                path.relative_to(CHECKS_DIR).as_posix().encode()
                + b"\0"
                + digest(path.read_bytes()).encode()
            )
    return found.hexdigest()


@functools.cache
def _record() -> dict:
    """not_started.json's verdicts by exercise, when it was made from these stubs and checks; else none."""
    try:
        found = json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(found, dict)
        or found.get("fingerprint") != record_digest()
        or not isinstance(found.get("exercises"), dict)
    ):
        return {}
    return found["exercises"]


def recorded(name: str) -> ExerciseResult | None:
    """The verdict of an exercise's public checks on its untouched stub, as recorded, a fresh copy; None without a record."""
    try:
        checks = [
            CheckResult(c["id"], c["status"], c["message"], public=True, calls=tuple(c["calls"]))
            for c in _record()[name]
        ]
    except (KeyError, TypeError):
        return None
    exercise = BY_NAME[name]
    if not checks:
        return None
    return ExerciseResult(
        name,
        exercise_status(checks),
        partial_points(exercise, checks),
        exercise.points,
        checks,
        functions=function_points(exercise, checks),
    )
