"""Hypothesis' examples drawn once, then replayed: the same inputs, without drawing them again.

With a fixed seed and `derandomize`, the examples Hypothesis runs through a check that passes are a
pure function of the checks' code, Hypothesis' and numpy's versions and the seed: drawing them is
the same work on every run. A check that passes under Hypothesis leaves its examples here; the next
run calls the check on them directly. Should one fail, the check runs under Hypothesis again, which
draws the same examples, finds the same failure and shrinks it, so the verdict and the message are
the ones the first run would give. A stub or a hang stops at the same example either way.

The record lives in the user's cache folder (ATTENTION_BY_HAND_CACHE chooses another, "off" none),
written by the grader alone: the student's code never sees it, confined as it is.
"""

import functools
import hashlib
import os
import sys
import tempfile
from pathlib import Path

import hypothesis
import numpy as np

from grader.sandbox.worker.codec import decode, encode

CACHE_VAR = "ATTENTION_BY_HAND_CACHE"
CHECKS = Path(__file__).resolve().parent
KEPT = 4  # versions' folders kept: older kits' and libraries' records are removed


def folder() -> Path | None:
    """Where this kit's records live, by platform; None when they are off."""
    chosen = os.environ.get(CACHE_VAR, "")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "attention-by-hand" / "examples"


@functools.cache
def examples_version() -> str:
    """The version of every check's examples, which names their folder: a hash of the checks' code and the libraries that draw them."""
    digest = hashlib.sha256(
        f"{hypothesis.__version__} {np.__version__} {sys.version_info[:2]}".encode()
    )
    for path in sorted(CHECKS.rglob("*.py")):
        digest.update(path.relative_to(CHECKS).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:24]


def key(test) -> str:
    """A drawn check's record name: its module and name, and what else draws its examples (its settings and seed)."""
    where = Path(str(sys.modules[test.__module__].__file__)).relative_to(CHECKS).with_suffix("")
    drawing = f"{test._hypothesis_internal_use_settings!r} {test._hypothesis_internal_use_seed!r}"
    return f"{'.'.join(where.parts)}.{test.__name__}-{hashlib.sha256(drawing.encode()).hexdigest()[:12]}"


def examples(name: str) -> list | None:
    """The (args, kwargs) Hypothesis called a check with, in order; None when none are kept.

    An empty record is none: a check that passed under Hypothesis ran on one example at least, and
    replaying none would pass any code.
    """
    if (base := folder()) is None:
        return None
    try:
        kept = decode((base / examples_version() / f"{name}.examples").read_bytes())
    except (OSError, ValueError):
        return None
    return kept if type(kept) is list and kept else None


def keep(name: str, seen: list) -> None:
    """Write a check's examples atomically; a folder that cannot be written keeps nothing."""
    if (base := folder()) is None:
        return
    where = base / examples_version()
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=f".{name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(encode(seen))
        os.replace(tmp, where / f"{name}.examples")
    except (OSError, ValueError):
        return
    tidy(base)


def tidy(base: Path) -> None:
    """Remove the records of all but the KEPT newest versions (other versions of the kit or its libraries)."""
    try:
        older = sorted(base.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)[KEPT:]
        for old in older:
            for path in old.iterdir():
                path.unlink()
            old.rmdir()
    except OSError:
        pass


def run(test, submission) -> None:
    """Run a drawn check: on its kept examples when all pass, else under Hypothesis, keeping its examples if it passes.

    test: the @given test, whose hypothesis.inner_test Hypothesis calls once per example.
    """
    name = key(test)
    kept = examples(name)
    if kept is not None:
        try:
            for args, kwargs in kept:
                test.hypothesis.inner_test(submission, *args, **kwargs)
            return
        except (
            Exception
        ):  # a failure: Hypothesis finds it again on the same examples, and shrinks it
            pass
    seen: list = []
    inner = test.hypothesis.inner_test

    def recording(*args, **kwargs):
        example = (
            tuple(a for a in args if a is not submission),
            {k: v for k, v in kwargs.items() if v is not submission},
        )
        try:
            seen.append(decode(encode(example)))  # a copy, as it was before the check ran
        except (
            ValueError
        ):  # a value the codec cannot carry: this check is drawn afresh on every run
            seen.append(None)
        return inner(*args, **kwargs)

    test.hypothesis.inner_test = recording
    try:
        test(submission)
    finally:
        test.hypothesis.inner_test = inner
    if None not in seen:
        keep(name, seen)


def replayed(test):
    """Decorate a drawn check that has no run at the comparison's sizes (scale.at_scale has): its examples replayed all the same."""

    def check(submission):
        run(test, submission)

    for name in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(check, name, getattr(test, name))
    check.drawn = test  # the Hypothesis test, for the seed (seeding.py)
    return check
