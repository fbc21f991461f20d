"""A class graded in shards: SIZE generated submissions, two `grader batch --shard I/2 --jobs 1` side by side, then merged.

Usage: python3 bench/bench_shards.py [SIZE] [SEED]   (default 1000 and 0; the target, at 1,000: 15 minutes on 2 cores)

The class is written by tests/course/classroom.py's student generator, which records what each student did: most
right (each in a style of its own), some unfinished (the first functions in lesson order written, the rest left
stubs), some wrong (one or two of the known mistakes of tests/mutants/wrong/). What each should score follows from
that: an exercise whose functions are all right earns its points; an unfinished one the shares of the functions
written; one with a mistake less than its points, and at least its points less the mistaken functions' shares. Every
row of the merged CSV is checked against it. Prints the wall time, the CPU time the shards' processes took (the least
wall time on two idle cores is half of it), the machine's load average before and after, and the share of CPU time
the hypervisor took.
"""

import csv
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import machine

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "course"))
from classroom import Work, work  # noqa: E402

from grader.exercises import EXERCISES  # noqa: E402
from grader.paths import MODULES  # noqa: E402

KINDS = {"right": 0.7, "unfinished": 0.15, "mistake": 0.15}
TARGET = 15 * 60  # seconds, for 1,000 submissions on 2 cores
SHARDS = 2


def make_class(root: Path, size: int, seed: int) -> dict[str, Work]:
    """root/s0001 ...: each student's five modules; what each student did, by folder name."""
    rng = random.Random(seed)
    works = {}
    for number in range(1, size + 1):
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        modules, done = work(rng, kind)
        folder = root / f"s{number:04d}"
        folder.mkdir(parents=True)
        for module, data in modules.items():
            (folder / f"{module}.py").write_bytes(data)
        works[folder.name] = done
    return works


def expected(done: Work) -> tuple[float, float]:
    """The least and the most total the work can score: one number unless a mistake costs part of a function's share."""
    least = most = 0.0
    for exercise in EXERCISES:
        right = [f for f in exercise.functions if f in done.done and f not in done.mistakes]
        wrong = [f for f in exercise.functions if f in done.mistakes]
        least += sum(exercise.share(f) for f in right)
        most += sum(exercise.share(f) for f in right) + sum(exercise.share(f) - 0.5 for f in wrong)
    return least, most


def grade(root: Path, work_dir: Path, names: list[str]) -> tuple[float, list[int]]:
    """Run the shards side by side, each with --jobs 1; (seconds until the last ends, their exit statuses). Prints the CPU
    time their processes took as the kernel counted it for those waited for (a process killed and reaped by another is
    not), and the machine's busy CPU time meanwhile (all of it the shards' when nothing else ran)."""
    folders = [str(root / name) for name in names]
    used, ticks = resource.getrusage(resource.RUSAGE_CHILDREN), machine.cpu_times()
    start = time.perf_counter()
    shards = []
    for number in range(1, SHARDS + 1):
        command = [
            sys.executable,
            "-m",
            "grader",
            "batch",
            *folders,
            "--shard",
            f"{number}/{SHARDS}",
            "--jobs",
            "1",
        ]
        log = (work_dir / f"shard-{number}.log").open("w")
        shards.append(
            subprocess.Popen(
                [*command, "--csv", str(work_dir / f"shard-{number}.csv")],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    statuses = [shard.wait() for shard in shards]
    seconds, now = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    busy, count = machine.busy_seconds(ticks, machine.cpu_times()), max(1, len(names))
    print(
        f"CPU time of the shards' processes waited for: {cpu:.0f} s, {cpu / count:.2f} s per submission"
        + (
            f"; the machine's busy CPU time: {busy:.0f} s, {busy / count:.2f} s per submission"
            if busy
            else ""
        ),
        flush=True,
    )
    return seconds, statuses


def check(rows: list[dict], works: dict[str, Work]) -> list[str]:
    """What is wrong with the merged rows: a student missing or twice, a total outside what the work should score."""
    wrong = [f"{len(rows)} rows for {len(works)} students"] if len(rows) != len(works) else []
    for row in rows:
        least, most = expected(works[row["student"]])
        if not least <= float(row["total"]) <= most:
            wrong.append(
                f"{row['student']}: {row['status']} {row['total']}, expected {least:g} to {most:g}; {row['reason'][:200]}"
            )
    return wrong


def main(size: int, seed: int) -> int:
    print(f"load average before: {machine.load()} on {os.cpu_count()} cores", flush=True)
    ticks = machine.cpu_times()
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as scratch:
        work_dir = Path(scratch)
        works = make_class(work_dir / "class", size, seed)
        kinds = Counter(
            "right"
            if not w.mistakes and len(w.done) == 10
            else "wrong"
            if w.mistakes
            else "unfinished"
            for w in works.values()
        )
        print(f"{size} submissions of {len(MODULES)} modules: {dict(kinds)}", flush=True)
        seconds, statuses = grade(work_dir / "class", work_dir, sorted(works))
        start = time.perf_counter()
        merged = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "merge",
                *(str(work_dir / f"shard-{n}.csv") for n in range(1, SHARDS + 1)),
            ]
            + ["--csv", str(work_dir / "grades.csv")],
            capture_output=True,
            text=True,
        )
        seconds += time.perf_counter() - start
        for number in range(1, SHARDS + 1):
            print(
                f"shard {number}/{SHARDS} (exit status {statuses[number - 1]}):",
                (work_dir / f"shard-{number}.log").read_text().splitlines()[:2],
            )
        print(f"merge (exit status {merged.returncode}): {(merged.stdout + merged.stderr).strip()}")
        with (work_dir / "grades.csv").open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        wrong = check(rows, works)
    exact = sum(1 for w in works.values() if not w.mistakes)
    print(
        f"statuses: {dict(Counter(r['status'] for r in rows))}; isolation: {dict(Counter(r['isolation'] for r in rows))}"
    )
    print(
        f"totals: {len(rows) - len(wrong)} of {len(works)} as expected ({exact} exact, {len(works) - exact} within their mistakes' shares)"
    )
    for line in wrong[:20]:
        print("  NOT AS EXPECTED:", line)
    per = f"{seconds / size:.2f} s per submission" if size else ""
    met = "met" if seconds <= TARGET * size / 1000 else "missed"
    print(
        f"wall time: {seconds:.0f} s ({seconds / 60:.1f} min) for {size}, {per}; target {TARGET * size / 1000:.0f} s: {met}"
    )
    print(f"load average after: {machine.load()}; {machine.stolen(ticks, machine.cpu_times())}")
    return 1 if wrong or any(statuses) or merged.returncode else 0


if __name__ == "__main__":
    sys.exit(
        main(
            int(sys.argv[1]) if len(sys.argv) > 1 else 1000,
            int(sys.argv[2]) if len(sys.argv) > 2 else 0,
        )
    )
