"""What the seccomp filter costs `grader check --solutions`: each tier with and without it, runs alternating.

Usage: python3 bench/bench_filter.py [RUNS]   (default 5 runs of each case)
"Without" is the same command with libseccomp made to look missing (grader.sandbox.seccomp.missing),
so the worker starts unfiltered; the landlock tier cannot be had without it, so it runs filtered only.
The tiers this machine cannot have are left out, saying why. The runs alternate between the cases,
so load on the machine falls on all alike; the load average is printed before and after.
"""

import os
import statistics
import sys

import machine
from bench_check import check, timed

from grader.sandbox import isolation

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
        print(f"{label:<24} median {statistics.median(times):5.2f} s (min {min(times):.2f}, max {max(times):.2f}, {runs} runs)")
    print(f"load average after: {machine.load()}; {machine.stolen(ticks, machine.cpu_times())}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
