"""Median wall time of `grader check --solutions`, confined and unconfined, in one run.

Usage: python3 bench/bench_check.py [RUNS]   (default 5 runs of each case in each isolation)
Targets: all five ≤ 4 s and one exercise ≤ 1.5 s; the isolated run of all five within 2x the
unisolated one. Runs alternate between the isolations, so load on the machine falls on both alike.
"""

import os
import statistics
import subprocess
import sys
import time

from grader.exercises import NAMES
from grader.sandbox import isolation

TARGETS = {"all five": 4.0, "one exercise": 1.5}


def timed(args: list[str], tier: str) -> float:
    """Wall seconds for one `python -m grader check --solutions ARGS` in a fresh process, in this isolation."""
    start = time.perf_counter()
    env = {**os.environ, isolation.TIER_VAR: tier}
    run = subprocess.run(
        [sys.executable, "-m", "grader", "check", "--solutions", "--json", os.devnull, *args], capture_output=True, text=True, env=env
    )
    if run.returncode != 0:
        raise SystemExit(f"grader check --solutions failed in isolation {tier}:\n{run.stderr[-2000:]}")
    return time.perf_counter() - start


def tiers() -> list[str]:
    """The isolations this machine offers, strongest first, and none."""
    return [tier for tier in isolation.TIERS if not isolation.why_not(tier)]


def main(runs: int) -> None:
    """Print, per case and isolation, the median wall time and its range; then the ratios to none."""
    available = tiers()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; isolations: {', '.join(available)}", flush=True)
    medians = {}
    for label, args in ({"all five": []} | {name: [name] for name in NAMES}).items():
        walls = {tier: [] for tier in available}
        for _ in range(runs):
            for tier in available:
                walls[tier].append(timed(args, tier))
        target = TARGETS["all five" if label == "all five" else "one exercise"]
        for tier, times in walls.items():
            times.sort()
            medians[label, tier] = median = statistics.median(times)
            verdict = "within" if median <= target else "OVER"
            print(
                f"{label:<10} {tier:<10} median {median:5.2f} s (min {times[0]:.2f}, max {times[-1]:.2f}), "
                f"{runs} runs: {verdict} the {target:g} s target",
                flush=True,
            )
    for tier in available[:-1]:
        ratio = medians["all five", tier] / medians["all five", "none"]
        print(f"all five, {tier} / none: {ratio:.2f}x ({'within' if ratio <= 2 else 'OVER'} the 2x target)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
