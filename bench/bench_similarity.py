"""The similarity report on generated classes: its time and peak memory, against the targets, and where the planted copies rank.

Usage: python3 bench/bench_similarity.py [SIZE ...]   (default 300 1000 3000)

Each class is made by tests/course/classroom.py (right work in many styles, mistakes, unfinished and
broken work, five planted groups of copies and three copies of the reference: 21 planted pairs), a
CSV as `grader batch` writes it points at its folders, and `grader report CSV --pairs FILE` runs in a
fresh process, as an instructor runs it: its wall time, CPU time and peak resident memory (the
kernel's own count for that process, from wait4) are printed with the load average before and
after. Targets: 1,000 students within 60 s, 3,000 within 5 minutes, each under 512 MiB.
"""

import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT / "tests" / "course"))  # the class generator, shared with the tests

from classroom import make_class  # noqa: E402

from grader.course.rows import COLUMNS, filed, shown  # noqa: E402

TARGETS = {1000: 60.0, 3000: 300.0}  # seconds
MEMORY = 512 << 20  # bytes


def batch_csv(path: Path, folders: dict[str, Path]) -> None:
    """A CSV as `grader batch` writes it: a row per folder (the report reads its student and folder)."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for student, folder in folders.items():
            writer.writerow(
                {
                    "student": shown(student),
                    "folder": filed(folder),
                    "status": "graded",
                    "total": "0.0",
                    "failed checks": "",
                }
            )


def report(grades: Path, pairs: Path) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, peak resident bytes, output) of `grader report CSV --pairs FILE` in a fresh process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "grader", "report", str(grades), "--pairs", str(pairs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output = process.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"grader report failed ({process.returncode}):\n{output[-3000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, output


def ranks(pairs: Path, planted: set) -> tuple[int, int]:
    """(planted pairs among the first 25 of the pairs CSV, pairs listed)."""
    with pairs.open(encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    return sum(frozenset((r["student"], r["other"])) in planted for r in rows[:25]), len(rows)


def bench(size: int, root: Path) -> None:
    started = time.perf_counter()
    made = make_class(root / "class", size, seed=0)
    made_in = time.perf_counter() - started
    grades, pairs = root / "grades.csv", root / "pairs.csv"
    batch_csv(grades, made.folders)
    load_before, cpu_before = machine.load(), machine.cpu_times()
    seconds, cpu, peak, _ = report(grades, pairs)
    top, listed = ranks(pairs, made.planted())
    target = TARGETS.get(size)
    within = (
        ""
        if target is None
        else f"; target {target:.0f} s: {'met' if seconds <= target and peak < MEMORY else 'MISSED'}"
    )
    print(
        f"{size:>5} students (made in {made_in:.0f} s): report {seconds:.1f} s wall, {cpu:.1f} s CPU, peak {peak / 2**20:.0f} MiB{within}"
    )
    print(
        f"      planted pairs in the top 25: {top} of {len(made.planted())}; pairs listed: {listed}"
    )
    print(
        f"      load average before {load_before}, after {machine.load()}; {machine.stolen(cpu_before, machine.cpu_times())}"
    )


def main(sizes: list[int]) -> None:
    print(f"bench_similarity on {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix=f"bench-similarity-{size}-") as tmp:
            bench(size, Path(tmp))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [300, 1000, 3000])
