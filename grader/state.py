"""The student's state folder `<submission>/.grader/`: the last verdict and the hint ladders.

Everything here is a cache or a convenience: a folder that cannot be written (a read-only
install, a full disk) costs the memory of the last run, never a crash.
"""

import hashlib
import json
import os
import tempfile
from pathlib import Path

import grader
from grader.exercises import NAMES
from grader.paths import MODULES, SOLUTIONS_DIR

STATE_DIR = ".grader"
VERDICTS = "verdicts.json"
GRADER_DIR = Path(grader.__file__).resolve().parent


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
    """The files a verdict depends on besides the student's: the grader and the reference."""
    files = [p for p in GRADER_DIR.rglob("*.py") if "__pycache__" not in p.parts]
    files += list(SOLUTIONS_DIR.glob("*.py"))
    return sorted(files)


def files_fingerprint(submission: Path) -> str:
    """A hash of the five modules' bytes, the grader's version and the checks' own files."""
    h = hashlib.sha256(grader.__version__.encode())
    for module in MODULES:
        h.update(b"\0" + module.encode() + b"\0")
        try:
            h.update((Path(submission) / f"{module}.py").read_bytes())
        except OSError:
            h.update(b"<missing>")
    for path in _grader_files():
        h.update(b"\0" + path.relative_to(GRADER_DIR.parent).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def _stored(submission: Path, current: str) -> dict:
    """The saved exercise verdicts (as JSON, by name) that still match the files."""
    data = read_json(submission, VERDICTS)
    if not data or data.get("fingerprint") != current or not isinstance(data.get("exercises"), dict):
        return {}
    return data["exercises"]


def _report(exercises: list[dict], seed: int):
    """A Report from exercise verdicts in JSON form, in lesson order."""
    from grader.results import Report

    order = {name: i for i, name in enumerate(NAMES)}
    exercises = sorted(exercises, key=lambda e: order.get(e["name"], len(order)))
    points = sum(e["points"] for e in exercises)
    max_points = sum(e["max_points"] for e in exercises)
    return Report.from_json(
        {"total": {"points": points, "max_points": max_points}, "exercises": exercises, "seed": seed}
    )


def _entries(report) -> list[dict]:
    """A report's exercise verdicts in JSON form, keeping each root-cause note."""
    return [dict(e.to_json(), note=e.note) if e.note else e.to_json() for e in report.exercises]


def save_report(submission: Path, report, fingerprint: str | None = None) -> None:
    """Remember a verdict, merged with the saved verdicts of the same files.

    Pass the fingerprint taken before the checks ran, so a save during the run is not missed.
    """
    current = fingerprint or files_fingerprint(submission)
    exercises = dict(_stored(submission, current))
    for entry in _entries(report):
        exercises[entry["name"]] = entry
    data = {"fingerprint": current, "grader_version": grader.__version__, "seed": report.seed, "exercises": exercises}
    write_json(submission, VERDICTS, data)


def cached_report(submission: Path, exercises=None):
    """The saved verdict of these exercises (all five by default) if no file changed since, else None."""
    names = list(exercises or NAMES)
    data = read_json(submission, VERDICTS) or {}
    stored = _stored(submission, files_fingerprint(submission))
    if not all(name in stored for name in names):
        return None
    return _report([stored[name] for name in names], data.get("seed", 0))


def checked_report(submission: Path, exercises=None):
    """The saved verdict, with the checks run (and saved) for any exercise it lacks."""
    from grader.runner import run_checks

    names = list(exercises or NAMES)
    current = files_fingerprint(submission)
    stored = _stored(submission, current)
    missing = [name for name in names if name not in stored]
    if not missing:
        data = read_json(submission, VERDICTS) or {}
        return _report([stored[name] for name in names], data.get("seed", 0))
    fresh = run_checks(submission, missing)
    save_report(submission, fresh, current)
    kept = [stored[name] for name in names if name in stored]
    return _report(kept + _entries(fresh), fresh.seed)


def last_known(submission: Path) -> dict:
    """Every saved exercise verdict in JSON form by name, whether or not the files changed since."""
    data = read_json(submission, VERDICTS) or {}
    exercises = data.get("exercises")
    return exercises if isinstance(exercises, dict) else {}
