"""Some of a run's exercises checked beside the others, in a grader process of its own, on a machine with two cores or more.

A run's checks keep one core busy at a time: the grader waits while its worker computes, and the
worker while the grader checks. A second grader process checks a share of the exercises at once.
It is the grader's own code, started through the launcher; it reads the run's snapshot (never the
student's folder), confines its workers in the tier the run chose, and writes its verdicts as JSON
into the run's private folder. Batch and nbgrader grade serially here: they have jobs of their own.
"""

import dataclasses
import json
import os
import sys
from pathlib import Path

from grader import kit
from grader.check.results import CheckResult, ExerciseResult
from grader.exercises import BY_NAME
from grader.finish import finish
from grader.paths import KIT_ROOT
from grader.sandbox import isolation, launcher
from grader.sandbox.process import GRADER_FAULT

# Each exercise's checks, in seconds: the medians bench/bench_check.py prints for a fresh grader process on the
# development VM. In the full kit, heads and training ask the reference helper for their earlier exercises; in
# the student's kit the public checks alone run.
COST = {
    "full": {"scores": 0.48, "masking": 0.15, "softmax": 0.37, "heads": 0.94, "training": 1.27},
    "student": {"scores": 0.26, "masking": 0.13, "softmax": 0.35, "heads": 0.3, "training": 1.0},
}
START = 0.5  # seconds the process beside starts behind: its imports
SPARE_SECONDS = 60.0  # beyond the run's budget, before the process beside is taken for lost


def split(names: list[str]) -> tuple[list[str], list[str]]:
    """(checked here, checked beside), in lesson order: the costlier first, each to the side with less to do."""
    if len(names) < 2 or (os.cpu_count() or 1) < 2:
        return list(names), []
    cost = COST["student" if kit.is_student_kit() else "full"]
    loads, sides = [0.0, START], ([], [])  # type: tuple[list[float], tuple[list[str], list[str]]]
    for name in sorted(names, key=lambda name: -cost[name]):
        side = 0 if loads[0] <= loads[1] else 1
        sides[side].append(name)
        loads[side] += cost[name]
    return [name for name in names if name in sides[0]], [name for name in names if name in sides[1]]


def start(folder: Path, root: Path, names: list[str], stubs, options: dict) -> launcher.Child:
    """The process beside, checking these exercises of the snapshot in folder; its verdicts go to root/beside.json."""
    spec = {"folder": str(folder), "root": str(root), "names": names, "stubs": sorted(stubs), "tier": isolation.choose().tier, **options}
    return launcher.Child(launcher.module("grader.check.beside", json.dumps(spec), root=KIT_ROOT), output="discard", scratch=True)


def verdicts(child: launcher.Child, root: Path, names: list[str], budget: float) -> dict[str, ExerciseResult]:
    """What the process beside found; for each exercise it could not give, an error of the grader's."""
    ended = child.wait(budget + SPARE_SECONDS)  # the caller ends it, whatever happens here (Ctrl-C included)
    try:
        found = json.loads((root / "beside.json").read_text(encoding="utf-8"))  # written last, whole (a rename)
        return {name: _exercise(found[name]) for name in names}
    except (OSError, ValueError, KeyError, TypeError):
        said = child.output().strip().splitlines()
        why = (said[-1] if said else "it wrote no verdicts") if ended else f"it did not end within {budget + SPARE_SECONDS:g} s"
        return {name: _fault(name, why[:300]) for name in names}


def _exercise(data: dict) -> ExerciseResult:
    """An exercise's verdict from its JSON here."""
    checks = [CheckResult(**{**check, "calls": tuple(check["calls"])}) for check in data["checks"]]
    points, most = float(data["points"]), float(data["max_points"])
    return ExerciseResult(data["name"], data["status"], points, most, checks, functions=data.get("functions", {}))


def _fault(name: str, why: str) -> ExerciseResult:
    """An exercise the process beside could not check: an error of the grader's, no points."""
    message = f"The grader's second process could not check {name} ({why}). {GRADER_FAULT}"
    return ExerciseResult(name, "error", 0.0, BY_NAME[name].points, [CheckResult(f"{name}.checks_loaded", "error", message, True)])


def main(spec: str) -> int:
    """In the process beside: check the exercises, write their verdicts, exit 0."""
    from grader.check.collector import checked

    given = json.loads(spec)
    isolation.probed(given["tier"])  # the run's own probe found it working
    os.environ[isolation.TIER_VAR] = given["tier"]
    root, options = Path(given["root"]), {key: given[key] for key in ("profile", "seed", "timeout", "budget")}
    options["kinds"] = tuple(given["kinds"])
    ran = checked(Path(given["folder"]), root, given["names"], set(given["stubs"]), **options)
    found = {name: {**dataclasses.asdict(result), "checks": [dataclasses.asdict(c) for c in result.checks]} for name, result in ran.items()}
    with os.fdopen(os.open(root / "beside.tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as out:
        json.dump(found, out)  # only the grader's user may read it: the workers' users pass through root, never list it
    (root / "beside.tmp").replace(root / "beside.json")
    return 0


if __name__ == "__main__":
    finish(main(sys.argv[1]))
