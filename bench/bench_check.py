"""Median wall time of `grader check --solutions`: all five exercises, and each one alone.

Usage: python3 bench/bench_check.py [RUNS]   (default 5 runs each; targets: all ≤ 10 s, one ≤ 3 s)
"""

import os
import resource
import statistics
import subprocess
import sys
import time

from grader.exercises import NAMES

TARGETS = {"all five": 10.0, "one exercise": 3.0}


def cpu() -> float:
    """CPU seconds used so far by finished child processes (the grader and its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds for one `python -m grader check --solutions ARGS` in a fresh process."""
    start, used = time.perf_counter(), cpu()
    subprocess.run([sys.executable, "-m", "grader", "check", "--solutions", *args], check=True, capture_output=True)
    return time.perf_counter() - start, cpu() - used


def main(runs: int) -> None:
    """Print the median wall time, its range and the median CPU time of each case over runs."""
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    cases = {"all five": []} | {name: [name] for name in NAMES}
    for label, args in cases.items():
        runs_timed = [timed(args) for _ in range(runs)]
        walls = sorted(w for w, _ in runs_timed)
        target = TARGETS["all five" if label == "all five" else "one exercise"]
        verdict = "within" if statistics.median(walls) <= target else "OVER"
        print(
            f"{label:<10} wall median {statistics.median(walls):5.2f} s (min {walls[0]:.2f}, max {walls[-1]:.2f}), "
            f"CPU median {statistics.median(c for _, c in runs_timed):5.2f} s, {runs} runs: {verdict} the {target:g} s target",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
