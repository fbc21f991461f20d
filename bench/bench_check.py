"""`grader check --solutions` against the machine's own floor, in one run: medians, ratios, where the time goes.

Usage: python3 bench/bench_check.py [RUNS]   (default 5 runs of each case)
The floor is a fresh `python -c "import numpy, pytest, hypothesis"`, which every fresh-process check
pays. Targets: one exercise within 2x the floor, all five within 4x, a new student's
first `grader` (untouched stubs) within 2x and `grader` with nothing changed within 1x, in the strongest
isolation this machine offers, full-scale examples kept. The checks replay the examples Hypothesis
drew on an earlier run (grader/check/checks/replay.py); "all five, drawn" is the first run on a
machine, with no examples kept. `grader` (status) runs in the student's kit, written by `grader release`
into a temporary folder, whose checks are the public ones. Python keeps its bytecode, as on a student's machine
(PYTHONDONTWRITEBYTECODE is left out of the runs' environment). "student: ..." is
`grader check` as a student runs it: in the student's kit, its public checks, each exercise
built on the student's own earlier ones, with the reference's five files copied in as the student's.
The runs alternate between the cases, so load on the machine falls
on all alike; the load average is printed before and after. "The least a run can take" is the CPU time of
all of a run's processes divided by the machine's cores: no overlap and no saved round trip can take a run
below it, only less work. psutil misses what a process spends after its last reading (bench/cpu.py), so
that bound, if anything, is low.
"""

import cProfile
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cpu
import machine
from kits import student_kit

from grader.check.checks.replay import CACHE_VAR
from grader.exercises import NAMES
from grader.paths import SOLUTIONS_DIR

FLOOR = [sys.executable, "-c", "import numpy, pytest, hypothesis"]
# the interpreter and the kit's imports
IMPORTS = [sys.executable, "-c", "import grader.cli, grader.check.command, grader.check.report"]
# times the floor
TARGETS = {"all five": 4.0, "one exercise": 2.0, "status, stubs": 2.0, "status, unchanged": 1.0}
PARTS = {  # where a run's time goes, by the function that spends it (cumulative, in the grader's process)
    "the checks, imported and run": ("collector.py", "collect"),
    "  waiting for the sandbox (probe, worker starts)": ("workers.py", "get"),
    "  the student's calls (round trips, answers remembered)": ("workers.py", "call"),
    "  the checks on the kept examples": ("replay.py", "run"),
    "the report": ("report.py", "render"),
}


def keeping_bytecode(env: dict | None = None) -> dict:
    """This environment, with Python keeping the kit's compiled bytecode as it does on a student's machine.

    The floor's libraries were compiled when pip installed them; with PYTHONDONTWRITEBYTECODE set
    (some machines set it) the kit's own modules would be compiled afresh on every run instead.
    """
    return {
        key: value
        for key, value in {**os.environ, **(env or {})}.items()
        if key != "PYTHONDONTWRITEBYTECODE"
    }


def timed(argv: list[str], env: dict | None = None, cwd: Path | None = None) -> float:
    """Wall seconds of one fresh process."""
    start = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, text=True, env=keeping_bytecode(env), cwd=cwd)
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{run.stderr[-2000:]}")
    return time.perf_counter() - start


# `grader check` in the student's kit: public checks
STUDENT_CHECK = [sys.executable, "-m", "grader", "check", "--json", os.devnull]
# the student's `grader`, run in the student's kit (its folder first on sys.path)
STATUS = [sys.executable, "-m", "grader", "status"]


def check(args: list[str]) -> list[str]:
    """The command line of `grader check --solutions ARGS`."""
    return [sys.executable, "-m", "grader", "check", "--solutions", "--json", os.devnull, *args]


def breakdown(args: list[str]) -> dict[str, float]:
    """Seconds spent in each part of one in-process run, by cProfile (threads' own work is not in its figures), and the
    reference helper's answers timed on whichever thread asked."""
    from grader.check.report import render
    from grader.check.runner import run_checks
    from grader.paths import SOLUTIONS_DIR
    from grader.sandbox.helper import HELPER

    profile, helper = cProfile.Profile(), []
    asked = HELPER._asked

    def timed_ask(
        *args,
    ):  # on whichever thread asks: most asks are answered on the worker's reader thread
        began = time.perf_counter()
        try:
            return asked(*args)
        finally:
            helper.append(time.perf_counter() - began)

    HELPER._asked = timed_ask
    start = time.perf_counter()
    profile.enable()
    try:
        render(run_checks(SOLUTIONS_DIR, args or None), SOLUTIONS_DIR, solutions=True)
    finally:
        profile.disable()
        HELPER._asked = asked
    total = time.perf_counter() - start
    stats = pstats.Stats(profile).stats
    found = {"the whole run, in process": total}
    for part, (file, *functions) in PARTS.items():
        found[part] = sum(
            v[3]
            for (path, _, name), v in stats.items()
            if path.endswith(file) and name in functions
        )
        if part.strip().startswith("the student's calls"):
            found["    of which the reference helper's answers to asks"] = sum(helper)
    return found


def cpu_split(runs: int) -> None:
    """Print the CPU seconds of all five's processes by kind (medians)."""
    print(
        "the CPU time of `grader check --solutions` (all five), by process (medians; wall and CPU in s):"
    )
    found = [cpu.by_kind(check([]), keeping_bytecode()) for _ in range(runs)]
    kinds = sorted({name for _, split in found for name in split})
    parts = {
        name: statistics.median(split.get(name, (0, 0.0))[1] for _, split in found)
        for name in kinds
    }
    counts = {name: max(split.get(name, (0, 0.0))[0] for _, split in found) for name in kinds}
    total = statistics.median(sum(seconds for _, seconds in split.values()) for _, split in found)
    shown = ", ".join(f"{name} ({counts[name]}) {seconds:.2f}" for name, seconds in parts.items())
    print(f"  wall {statistics.median(w for w, _ in found):.2f}, CPU {total:.2f}: {shown}")


def cpu_bound(runs: int, floor: float) -> None:
    """Print, for each exercise and all five, the CPU seconds of all of a run's processes (medians)
    and the least wall time that CPU allows on this machine's cores, against the floor: no scheduling, overlap or
    fewer round trips can take a run below it; only less work can."""
    cores = os.cpu_count() or 1
    print(
        f"the least a run can take: the CPU time of all its processes (medians) spread over all {cores} cores:"
    )
    for label, args in [(name, [name]) for name in NAMES] + [("all five", [])]:
        found = [
            sum(seconds for _, seconds in cpu.by_kind(check(args), keeping_bytecode())[1].values())
            for _ in range(runs)
        ]
        least = statistics.median(found) / cores
        target = TARGETS["all five" if label == "all five" else "one exercise"]
        print(
            f"  {label:<9} CPU {statistics.median(found):.2f} s, so at least {least:.2f} s: {least / floor:.1f}x the floor (target {target:g}x)"
        )


def main(runs: int) -> None:
    """Print the floor, the medians and their ratios to it, and a breakdown of one exercise and of all five."""
    from grader.sandbox import isolation

    tier = isolation.choose().name
    print(f"load average before: {machine.load()} on {os.cpu_count()} cores; isolation: {tier}")
    ticks = machine.cpu_times()
    cases = {"floor": FLOOR, "imports": IMPORTS, "all five": check([])} | {
        name: check([name]) for name in NAMES
    }
    cases["all five, drawn"] = check([])
    kit, solved = student_kit(), student_kit()
    for name in NAMES:  # the student's kit with every exercise written as the reference writes it
        shutil.copy(SOLUTIONS_DIR / f"{name}.py", solved / "exercises" / f"{name}.py")
    cases |= {f"student: {name}": STUDENT_CHECK + [name] for name in ("all five", *NAMES)}
    cases["student: all five"] = STUDENT_CHECK
    cases["status, stubs"] = cases["status, unchanged"] = (
        STATUS  # a new student's first `grader`, and the next
    )
    walls: dict[str, list[float]] = {label: [] for label in cases}
    # the examples and bytecode kept, as after a first check
    subprocess.run(check([]), capture_output=True, env=keeping_bytecode())
    # the same in the student's kit
    subprocess.run(STUDENT_CHECK, capture_output=True, env=keeping_bytecode(), cwd=solved)
    for _ in range(runs):
        for label, argv in cases.items():
            if label == "status, stubs":
                shutil.rmtree(kit / "exercises" / ".grader", ignore_errors=True)  # no verdict yet
            with tempfile.TemporaryDirectory() as nothing_kept:
                env = {CACHE_VAR: nothing_kept} if label.endswith("drawn") else {}
                where = (
                    kit
                    if label.startswith("status")
                    else solved
                    if label.startswith("student")
                    else None
                )
                walls[label].append(timed(argv, env, where))
    shutil.rmtree(kit.parent)
    shutil.rmtree(solved.parent)
    floor = statistics.median(walls["floor"])
    for label, times in walls.items():
        median = statistics.median(times)
        line = f"{label:<18} median {median:5.2f} s (min {min(times):.2f}, max {max(times):.2f}, {runs} runs)"
        if label not in ("floor", "imports"):
            target = TARGETS.get(
                label, TARGETS["all five" if "all five" in label else "one exercise"]
            )
            ratio = median / floor
            line += f"  {ratio:4.1f}x the floor: {'within' if ratio <= target else 'OVER'} the {target:g}x target"
        print(line, flush=True)
    cpu_split(runs)
    cpu_bound(runs, floor)
    for args in (["softmax"], []):
        print(
            f"where the time of `grader check --solutions {' '.join(args) or '(all five)'}` goes (in process, after imports):"
        )
        for part, seconds in breakdown(args).items():
            print(f"  {part:<58} {seconds:5.2f} s")
    print(f"load average after: {machine.load()}; {machine.stolen(ticks, machine.cpu_times())}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
