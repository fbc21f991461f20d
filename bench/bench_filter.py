"""What the seccomp filter costs `grader check --solutions`: each tier with and without it, runs alternating.

Usage: python3 bench/bench_filter.py [RUNS]   (default 5 runs of each case)
"Without" is the same command with libseccomp made to look missing (grader.sandbox.seccomp.missing),
so the worker starts unfiltered; the landlock tier cannot be had without it, so it runs filtered only.
The tiers this machine cannot have are left out, saying why. The runs alternate between the cases,
so load on the machine falls on all alike; the load average is printed before and after. A whole
check is noisy on a busy machine, so the filter's own costs are also timed apart: building it (the
import of pyseccomp, which looks for libseccomp, and the export), and a call's round trip to a worker
(CALLS calls of softmax on one row), filtered and not, in the strongest tier.
"""

import os
import statistics
import subprocess
import sys
import time

import machine
import numpy as np
from bench_check import check, timed

from grader.paths import SOLUTIONS_DIR
from grader.sandbox import isolation, seccomp
from grader.sandbox.handle import StudentCode

CALLS = 500
BUILD = "import time; t = time.perf_counter(); from grader.sandbox import seccomp; seccomp.program(); print(time.perf_counter() - t)"

UNFILTERED = (
    "import runpy, grader.sandbox.seccomp as s; s.missing = lambda: 'made to look missing'; "
    "runpy.run_module('grader', run_name='__main__', alter_sys=True)"
)


def cases() -> dict[str, tuple[list[str], dict]]:
    """label: (command, environment) for every tier this machine has, with and without the filter."""
    found = {}
    for tier in ("namespaces", "user", "landlock"):
        if why := isolation.why_not(tier):
            print(f"{tier}: left out ({why[:200]})")
            continue
        env = {isolation.TIER_VAR: tier}
        found[f"{tier}, filtered"] = (check([]), env)
        if tier != "landlock":
            found[f"{tier}, unfiltered"] = ([sys.executable, "-c", UNFILTERED, *check([])[3:]], env)
    return found


def round_trip(filtered: bool) -> float:
    """Seconds of one call to a fresh worker of the strongest tier, the median of CALLS, with or without the filter."""
    missing = seccomp.missing
    if not filtered:
        seccomp.missing = lambda: "made to look missing"
    try:
        with StudentCode(SOLUTIONS_DIR) as student:
            x = np.ones((1, 8))
            student.call("softmax", "softmax", x)  # the worker started and the module imported
            times = []
            for _ in range(CALLS):
                start = time.perf_counter()
                student.call("softmax", "softmax", x)
                times.append(time.perf_counter() - start)
    finally:
        seccomp.missing = missing
    return statistics.median(times)


def apart(runs: int) -> None:
    """The filter's own costs: building it in a fresh process, and a call's round trip with and without it."""
    builds = [
        float(
            subprocess.run(
                [sys.executable, "-c", BUILD], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(runs)
    ]
    print(
        f"building the filter in a fresh process (pyseccomp imported): median {1000 * statistics.median(builds):.0f} ms"
    )
    trips: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(runs):
        for filtered in trips:
            trips[filtered].append(round_trip(filtered))
    for filtered, medians in trips.items():
        label = "filtered" if filtered else "unfiltered"
        print(
            f"a call's round trip, {isolation.choose().name}, {label}: median {1e6 * statistics.median(medians):.0f} µs"
        )


def main(runs: int) -> None:
    print(f"load average before: {machine.load()} on {os.cpu_count()} cores")
    ticks = machine.cpu_times()
    chosen = cases()
    walls: dict[str, list[float]] = {label: [] for label in chosen}
    timed(check([]))  # the examples and bytecode kept, as after a first check
    for _ in range(runs):
        for label, (argv, env) in chosen.items():
            walls[label].append(timed(argv, env))
    for label, times in walls.items():
        print(
            f"{label:<24} median {statistics.median(times):5.2f} s (min {min(times):.2f}, max {max(times):.2f}, {runs} runs)"
        )
    apart(runs)
    print(f"load average after: {machine.load()}; {machine.stolen(ticks, machine.cpu_times())}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--apart"]:
        apart(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
