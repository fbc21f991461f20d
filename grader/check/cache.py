"""The student's state folder `<submission>/.grader/`: the last verdict and the hint ladders.

Everything here is a cache or a convenience: a folder that cannot be written (a read-only
install, a full disk) costs the memory of the last run, never a crash.
"""

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import grader
from grader import kit
from grader.check.files import depends_on, read_modules
from grader.exercises import NAMES
from grader.paths import SOLUTIONS_DIR

STATE_DIR = ".grader"
VERDICTS = "verdicts.json"
FAILING = "failing.json"  # the failing call of each failed check, for `grader try`
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
    files = [p for p in [*GRADER_DIR.rglob("*.py"), *GRADER_DIR.rglob("*.npz")] if "__pycache__" not in p.parts]
    files += list(SOLUTIONS_DIR.glob("*.py"))
    return sorted(files)


_hashed: dict[tuple, str] = {}  # the version, the files' paths, sizes and modification times -> their hash, in this process


def _grader_hash() -> str:
    """A hash of the grader's version and its own files; read again only when one of them changed (a `grader watch`
    asks several times a save: 90 files read each time)."""
    files = _grader_files()
    try:
        stats = (grader.__version__, *((str(path), (st := path.stat()).st_size, st.st_mtime_ns) for path in files))
    except OSError:
        stats = None
    if stats in _hashed:
        return _hashed[stats]
    h = hashlib.sha256(grader.__version__.encode())
    for path in files:
        h.update(b"\0" + path.relative_to(GRADER_DIR.parent).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    if stats is not None:
        _hashed.clear()
        _hashed[stats] = h.hexdigest()
    return h.hexdigest()


def fingerprint(hashes: dict[str, str], base: str | None = None) -> str:
    """One exercise's fingerprint: the grader's hash and the sha256 of each module its verdict depends on."""
    h = hashlib.sha256((base or _grader_hash()).encode())
    for name, digest in sorted(hashes.items()):
        h.update(b"\0" + name.encode() + b"\0" + digest.encode())
    return h.hexdigest()


def files_fingerprint(submission: Path) -> dict[str, str]:
    """Per exercise, the fingerprint of the live folder's files, each read once (a run's own comes from its snapshot)."""
    base, files = _grader_hash(), read_modules(Path(submission))
    hashes = {name: hashlib.sha256(data).hexdigest() if data is not None else "<missing>" for name, data in files.items()}
    return {exercise: fingerprint({f"{m}.py": hashes[f"{m}.py"] for m in depends_on(files, exercise)}, base) for exercise in NAMES}


def report_fingerprint(report, fallback: dict[str, str] | None = None) -> dict[str, str]:
    """Per exercise, the fingerprint of the files its verdict was given (the run's snapshot), else fallback's."""
    base = _grader_hash()
    found = dict(fallback or {})
    found |= {e.name: fingerprint(e.files, base) for e in report.exercises if e.files}
    return found


def _saved(submission: Path) -> dict[str, dict]:
    """The saved entries, by exercise, that hold a well-formed verdict."""
    saved = (read_json(submission, VERDICTS) or {}).get("exercises")
    if not isinstance(saved, dict):
        return {}
    return {name: entry for name, entry in saved.items() if isinstance(entry, dict) and _valid(name, entry.get("verdict"))}


def _valid(name: str, verdict) -> bool:
    """True when a saved verdict has the shape check.schema.json gives an exercise."""
    from grader.check.results import STATUSES

    try:
        return (
            verdict["name"] == name
            and verdict["status"] in STATUSES
            and all(isinstance(verdict[key], (int, float)) for key in ("points", "max_points"))
            and all(isinstance(c["id"], str) and c["status"] in STATUSES for c in verdict["checks"])
        )
    except (KeyError, TypeError):
        return False


def _stored(submission: Path, current: dict[str, str]) -> dict[str, dict]:
    """The saved exercise verdicts (as JSON, by name) whose files are unchanged."""
    return {name: entry["verdict"] for name, entry in _saved(submission).items() if entry.get("fingerprint") == current.get(name)}


def _report(exercises: list[dict], seed: int):
    """A Report from exercise verdicts in JSON form, in lesson order."""
    from grader.check.results import Report

    order = {name: i for i, name in enumerate(NAMES)}
    exercises = sorted(exercises, key=lambda e: order.get(e["name"], len(order)))
    return Report.from_json({"exercises": exercises, "seed": seed, "checks": kit.checks_run()})  # this kit's runs saved them


def _entries(report) -> list[dict]:
    """A report's exercise verdicts in JSON form, keeping each root-cause note and the exercise it names."""
    return [dict(e.to_json(), note=e.note, cause=e.cause) if e.note else e.to_json() for e in report.exercises]


def save_report(submission: Path, report, fingerprint: dict[str, str] | None = None, ran=None, by: str = "check") -> None:
    """Remember a verdict next to the saved verdicts of other exercises.

    Each verdict is filed under the fingerprint of the snapshot it was given (its files' sha256);
    one without them (made by hand) under `fingerprint`, taken before it was made, or the live files';
    ran: the report of the checks run just now, whose failing calls are kept (the report itself by default);
    by: the command that ran them (check, watch, status, compare), which `grader try` names.
    """
    current = report_fingerprint(report, fingerprint)
    if any(e.name not in current for e in report.exercises):  # verdicts made by hand: the live files, read now
        current = report_fingerprint(report, files_fingerprint(submission))
    exercises, ran = _saved(submission), report if ran is None else ran
    for entry in _entries(report):
        calls = _calls(ran, entry["name"]) or exercises.get(entry["name"], {}).get("calls", {})
        exercises[entry["name"]] = {"fingerprint": current.get(entry["name"]), "verdict": entry, "calls": calls}
    data = {"grader_version": grader.__version__, "seed": report.seed, "exercises": exercises}
    write_json(submission, VERDICTS, data)
    save_failing(submission, ran, by)


def _calls(report, name: str) -> dict[str, list[str]]:
    """Each check of an exercise that ran, and the functions of the exercise it called (in the exercise's order)."""
    return {check.id: list(check.calls) for e in report.exercises if e.name == name for check in e.checks if check.calls}


def calls_known(submission: Path) -> dict[str, tuple[str, ...]]:
    """Each saved check's id and the functions of its exercise it called when it last ran (for `grader hint`)."""
    known = {}
    for entry in _saved(submission).values():
        calls = entry.get("calls")
        for check, functions in calls.items() if isinstance(calls, dict) else ():
            if isinstance(check, str) and isinstance(functions, list) and all(isinstance(f, str) for f in functions):
                known[check] = tuple(functions)
    return known


def save_failing(submission: Path, report, by: str = "check") -> None:
    """Remember the failing call of each failed check of the report's exercises, for `grader try`, with when and by what."""
    kept, at = failing_examples(submission), time.strftime("%H:%M:%S")
    for exercise in report.exercises:
        kept = {check: found for check, found in kept.items() if check.partition(".")[0] != exercise.name}
        kept |= {check.id: dict(check.example, by=by, at=at) for check in exercise.checks if check.example}
    if kept:
        write_json(submission, FAILING, kept)
    elif (state_dir(submission) / FAILING).is_file():
        (state_dir(submission) / FAILING).unlink(missing_ok=True)


def failing_examples(submission: Path) -> dict[str, dict]:
    """{check id: {"function": name, "args": base64 of the encoded arguments}} of the last failed checks."""
    kept = read_json(submission, FAILING) or {}
    return {check: found for check, found in kept.items() if isinstance(found, dict) and {"function", "args"} <= set(found)}


def cached_report(submission: Path, exercises=None):
    """The saved verdict of these exercises (all five by default) if none of their files changed, else None."""
    names = list(exercises or NAMES)
    stored = _stored(submission, files_fingerprint(submission))
    if not all(name in stored for name in names):
        return None
    return _report([stored[name] for name in names], _seed(submission))


def checked_report(submission: Path, exercises=None, by: str = "status"):
    """The saved verdict, with the checks run (and saved) for any exercise it lacks; by: the command asking."""
    names = list(exercises or NAMES)
    current = files_fingerprint(submission)
    stored = _stored(submission, current)
    missing = [name for name in names if name not in stored]
    if not missing:
        return _report([stored[name] for name in names], _seed(submission))
    from grader.check.runner import add_root_causes, run_checks

    fresh = run_checks(submission, missing)
    kept = [entry for name, entry in stored.items() if name not in missing]
    known = _report(kept + _entries(fresh), fresh.seed)
    add_root_causes(known.exercises)  # across every verdict of these files, not only this run's
    save_report(submission, known, current, ran=fresh, by=by)  # only a run's own results hold its failing calls
    return _report([e for e in _entries(known) if e["name"] in names], fresh.seed)


def _seed(submission: Path) -> int:
    """The Hypothesis seed of the saved verdicts."""
    seed = (read_json(submission, VERDICTS) or {}).get("seed", 0)
    return seed if isinstance(seed, int) else 0


def last_known(submission: Path) -> dict[str, dict]:
    """Every saved exercise verdict in JSON form by name, whether or not its files changed since."""
    return {name: entry["verdict"] for name, entry in _saved(submission).items()}


def unchanged(submission: Path) -> dict[str, dict]:
    """The saved verdicts (JSON form, by name) of the exercises whose files did not change since."""
    return _stored(submission, files_fingerprint(submission))
