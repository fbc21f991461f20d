"""Each mutant graded as a student's submission: the reference with the mutant's module in place, its own exercise's checks.

The checks run as `grader check EXERCISE` runs them in the full kit (public and hidden), on the
student's profile without its shrinking phase ("mutation"): the same examples in the same order,
so the same verdict, without the time spent finding the smallest failing input, which no verdict
here reads. Two processes grade at once (the machine is shared). A verdict is kept in the user's
cache folder under the hash of the mutant's source, the reference, the checks' code and the
libraries that draw their examples; a run with nothing changed grades nothing again.
"""

import hashlib
import json
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from hypothesis import Phase, settings
from mutants import Mutant, write

from grader.check.checks import profiles, replay
from grader.paths import SOLUTIONS_DIR

PROFILE = "mutation"
PROCESSES = 2
MUTATION_CACHE_VAR = "ATTENTION_BY_HAND_MUTATION_CACHE"  # kept across test runs, unlike the checks' examples during the tests


def register_profile() -> None:
    """The student's profile without shrinking: the verdict is the same, found sooner."""
    settings.register_profile(
        PROFILE, parent=settings.get_profile("default"), phases=(Phase.explicit, Phase.generate)
    )


def checks_hash() -> str:
    """What a verdict depends on besides the mutant: the checks (and the libraries drawing their examples), the reference."""
    digest = hashlib.sha256(replay.examples_version().encode())
    for path in sorted(SOLUTIONS_DIR.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    digest.update(repr(profiles.COMMON).encode())
    return digest.hexdigest()[:24]


def cache_folder() -> Path | None:
    """Where verdicts are kept: MUTATION_CACHE_VAR's folder, else the user's cache folder's; None when it says "off"."""
    chosen = os.environ.get(MUTATION_CACHE_VAR, "")
    if chosen:
        return None if chosen == "off" else Path(chosen)
    return (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        / "attention-by-hand"
        / "mutation"
    )


def key(mutant: Mutant, checks: str) -> str:
    return hashlib.sha256(f"{checks}\0{mutant.module}\0{mutant.source}".encode()).hexdigest()[:32]


def kept(mutant: Mutant, checks: str) -> dict | None:
    if (folder := cache_folder()) is None:
        return None
    try:
        return json.loads((folder / f"{key(mutant, checks)}.json").read_text())
    except (OSError, ValueError):
        return None


def keep(mutant: Mutant, checks: str, verdict: dict) -> None:
    if (folder := cache_folder()) is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(fd, "w") as out:
        json.dump(verdict, out)
    os.replace(tmp, folder / f"{key(mutant, checks)}.json")


def grade_one(mutant: Mutant) -> dict:
    """The verdict of the mutant's own exercise: its status, the checks that failed and whether a public one did (pool process)."""
    from grader.check.runner import run_checks

    register_profile()
    with tempfile.TemporaryDirectory(prefix="mutant-") as scratch:
        started = time.perf_counter()
        result = run_checks(
            write(mutant, Path(scratch) / "submission"), [mutant.module], profile=PROFILE
        ).exercises[0]
        seconds = time.perf_counter() - started
    failed = [c for c in result.checks if c.status != "passed"]
    return {
        "status": result.status,
        "failed": [c.id for c in failed],
        "public": any(c.public for c in failed),
        "first": failed[0].message.splitlines()[0][:200] if failed else "",
        "seconds": round(seconds, 2),
    }


def grade(mutants: list[Mutant], progress=None) -> tuple[dict[str, dict], int, float]:
    """Every mutant's verdict by id (kept ones read, the others graded two at a time), how many were graded, and the seconds that took."""
    checks = checks_hash()
    verdicts = {m.id: found for m in mutants if (found := kept(m, checks)) is not None}
    todo = [m for m in mutants if m.id not in verdicts]
    started = time.perf_counter()
    if todo:
        with ProcessPoolExecutor(PROCESSES, mp_context=get_context("spawn")) as pool:
            for mutant, verdict in zip(todo, pool.map(grade_one, todo)):
                keep(mutant, checks, verdict)
                verdicts[mutant.id] = verdict
                if progress:
                    progress(mutant, verdict)
    return verdicts, len(todo), time.perf_counter() - started
