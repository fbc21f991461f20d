"""What `<submission>/.grader/` remembers: each exercise's last verdict, filed under the fingerprint of the files it was
given, with what each check called and each failed check's failing call (for `grader try`); and the hint ladders.

Everything here is a convenience: a folder that cannot be written (a read-only install, a full disk)
costs the memory of the last run, never a crash.
"""

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import grader
from grader import kit
from grader.check.files import hashes_for, read_modules
from grader.check.results import STATUSES, ExerciseResult, Report
from grader.exercises import NAMES
from grader.paths import SOLUTIONS_DIR
from grader.sandbox.private import Snapshot

STATE_DIR = ".grader"
VERDICTS = "verdicts.json"
FAILING = "failing.json"  # the failing call of each failed check, for `grader try`
GRADER_DIR = Path(grader.__file__).resolve().parent
# what a check's verdict names beside its message, kept for the root causes
EVIDENCE = ("blamed_function", "failed_import")


def state_dir(submission: Path) -> Path:
    """Where the state of this submission lives."""
    return Path(submission) / STATE_DIR


def read_json(submission: Path, name: str) -> dict | None:
    """A state file's contents, or None when it is missing or unreadable."""
    try:
        data = json.loads((state_dir(submission) / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json(submission: Path, name: str, data: dict) -> bool:
    """Write a state file atomically; False when the folder cannot be written."""
    folder = state_dir(submission)
    if folder.is_symlink():
        return False  # never written through a link, which could point anywhere
    try:
        folder.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
            os.replace(tmp, folder / name)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        return False
    return True


def _grader_files() -> list[Path]:
    """The files a verdict depends on besides the student's: the grader, its stored worked examples and the reference."""
    files = [
        p
        for p in [*GRADER_DIR.rglob("*.py"), *GRADER_DIR.rglob("*.npz")]
        if "__pycache__" not in p.parts
    ]
    files += list(SOLUTIONS_DIR.glob("*.py"))
    return sorted(files)


_digests: dict[
    tuple, str
] = {}  # the version, the files' paths, sizes and modification times -> their digest, in this process


def grader_digest() -> str:
    """A sha256 of the grader's version and its own files, read again only when one of them changed (90 files)."""
    files = _grader_files()
    try:
        stats = (
            grader.__version__,
            *((str(path), (st := path.stat()).st_size, st.st_mtime_ns) for path in files),
        )
    except OSError:
        stats = None
    if stats in _digests:
        return _digests[stats]
    h = hashlib.sha256(grader.__version__.encode())
    for path in files:
        h.update(b"\0" + path.relative_to(GRADER_DIR.parent).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    if stats is not None:
        _digests.clear()
        _digests[stats] = h.hexdigest()
    return h.hexdigest()


def exercise_fingerprint(hashes: Mapping[str, str], base: str | None = None) -> str:
    """One exercise's fingerprint: the grader's digest and the sha256 of each module its verdict depends on."""
    h = hashlib.sha256((base or grader_digest()).encode())
    for name, digest in sorted(hashes.items()):
        h.update(b"\0" + name.encode() + b"\0" + digest.encode())
    return h.hexdigest()


def fingerprints(files: Mapping[str, bytes | None]) -> dict[str, str]:
    """Per exercise, the fingerprint of these files (the five as read once: a snapshot's, or read_modules')."""
    base = grader_digest()
    return {exercise: exercise_fingerprint(hashes_for(files, exercise), base) for exercise in NAMES}


def live_fingerprints(submission: Path) -> dict[str, str]:
    """Per exercise, the fingerprint of the folder's files as they are now, each read once."""
    return fingerprints(read_modules(Path(submission)))


@dataclass
class State:
    """The saved verdicts of one submission, as read once from its `.grader/` (State(folder) alone: none saved)."""

    folder: Path
    # exercise -> {"fingerprint", "verdict", "checks"}, well formed
    entries: dict[str, dict] = field(default_factory=dict)
    # check id -> {"function", "args", ...}: its failing call
    failing: dict[str, dict] = field(default_factory=dict)
    seed: int = 0  # the Hypothesis seed of the verdicts saved last

    @classmethod
    def load(cls, submission: Path) -> "State":
        """The state as saved; nothing of a file that is missing or damaged, nor a verdict that is not well formed."""
        saved = read_json(submission, VERDICTS) or {}
        exercises = _dict(saved.get("exercises"))
        entries = {
            name: entry
            for name, entry in exercises.items()
            if isinstance(entry, dict) and _valid(name, entry.get("verdict"))
        }
        failing = read_json(submission, FAILING) or {}
        failing = {
            check: found
            for check, found in failing.items()
            if isinstance(found, dict) and {"function", "args"} <= set(found)
        }
        seed = saved.get("seed", 0)
        return cls(Path(submission), entries, failing, seed if isinstance(seed, int) else 0)

    def fresh(self, prints: Mapping[str, str]) -> dict[str, ExerciseResult]:
        """The saved verdicts of the files these fingerprints are of (fingerprints()), by exercise."""
        return {
            name: self._result(entry)
            for name, entry in self.entries.items()
            if entry.get("fingerprint") == prints.get(name)
        }

    def last(self) -> dict[str, ExerciseResult]:
        """Every saved verdict by exercise, whether or not its files changed since."""
        return {name: self._result(entry) for name, entry in self.entries.items()}

    def _result(self, entry: dict) -> ExerciseResult:
        """A saved verdict as the run gave it: its checks with what they called and named, and their failing calls."""
        (result,) = Report.from_json({"exercises": [entry["verdict"]]}).exercises
        evidence = _dict(entry.get("checks"))
        for check in result.checks:
            kept = _dict(evidence.get(check.id))
            calls = kept.get("calls")
            check.calls = (
                tuple(calls)
                if isinstance(calls, list) and all(isinstance(f, str) for f in calls)
                else ()
            )
            for name in EVIDENCE:
                setattr(check, name, kept[name] if isinstance(kept.get(name), str) else "")
            check.example = self.failing.get(check.id)
        return result

    def save(self, report: Report, by: str = "check") -> None:
        """File each verdict of the report under the fingerprint of the files it was given (the sha256 of the run's
        snapshot), beside the saved verdicts of other exercises, with each failed check's failing call, when it was
        found and by which command (check, watch, status, compare), for `grader try`.

        What another process saved meanwhile stays: the state files are read again just before they are written.
        """
        now, base = State.load(self.folder), grader_digest()
        entries, failing, at = now.entries, now.failing, time.strftime("%H:%M:%S")
        for result in report.exercises:
            # no files given: one no folder's files have
            fingerprint = exercise_fingerprint(result.files, base)
            entries[result.name] = {
                "fingerprint": fingerprint,
                "verdict": _verdict(result),
                "checks": _evidence(result),
            }
            failing = {
                check: found
                for check, found in failing.items()
                if check.partition(".")[0] != result.name
            }
            failing |= {
                check.id: {"by": by, "at": at, **check.example}
                for check in result.checks
                if check.example
            }
        write_json(
            self.folder,
            VERDICTS,
            {"grader_version": grader.__version__, "seed": report.seed, "exercises": entries},
        )
        if failing:
            write_json(self.folder, FAILING, failing)
        elif (state_dir(self.folder) / FAILING).is_file():
            (state_dir(self.folder) / FAILING).unlink(missing_ok=True)
        self.entries, self.failing, self.seed = entries, failing, report.seed


def _dict(value) -> dict:
    """A value read from a state file if it is a dict, else an empty one (a file edited by hand, or damaged)."""
    return value if isinstance(value, dict) else {}


def _valid(name: str, verdict) -> bool:
    """True when a saved verdict has the shape check.schema.json gives an exercise."""
    try:
        return (
            verdict["name"] == name
            and verdict["status"] in STATUSES
            and all(isinstance(verdict[key], (int, float)) for key in ("points", "max_points"))
            and all(isinstance(c["id"], str) and c["status"] in STATUSES for c in verdict["checks"])
        )
    except (KeyError, TypeError):
        return False


def _verdict(result: ExerciseResult) -> dict:
    """An exercise's verdict in JSON form, with its root-cause note and the exercise that note names."""
    return (
        dict(result.to_json(), note=result.note, cause=result.cause)
        if result.note
        else result.to_json()
    )


def _evidence(result: ExerciseResult) -> dict[str, dict]:
    """For each check, what its verdict holds beside the JSON: the functions it called, the function and module it named."""
    return {
        check.id: {"calls": list(check.calls), **{name: getattr(check, name) for name in EVIDENCE}}
        for check in result.checks
    }


def checked_report(submission: Path, exercises=None, by: str = "status", before=None) -> Report:
    """The verdicts of these exercises (all five by default) on the folder's files as they are now: each saved one whose
    files are unchanged, the others checked on a snapshot of the files and saved; by: the command asking.

    before: told the exercises to check, just before their checks run (`grader status` says so).
    """
    names = [name for name in NAMES if exercises is None or name in exercises]
    with Snapshot(Path(submission)) as snapshot:
        state = State.load(submission)
        # nothing saved: no fingerprint to take
        saved = state.fresh(fingerprints(snapshot.files)) if state.entries else {}
        missing = [name for name in names if name not in saved]
        if not missing:
            return Report([saved[name] for name in names], seed=state.seed, checks=kit.checks_run())
        if before is not None:
            before(missing)
        # the checks' modules, loaded only when a check must run
        from grader.check.runner import check_snapshot

        report = check_snapshot(snapshot, names, saved=saved, rerun=False)
    state.save(report, by=by)
    return report
