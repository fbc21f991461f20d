"""Progress one can watch, measured: a class through `grader batch` and `nbgrader autograde`, each logging to a file.

Usage: python3 bench/bench_progress.py [SIZE] [SEED] [EVERY]   (default 300, 0, and the kit's line a minute)
With BENCH_KEEP=DIR in the environment, the class, the logs, the batch's CSV and the nbgrader course stay in DIR.

The class is bench_shards.py's (tests/course/classroom.py's student generator), its last student handing in the
reference byte for byte, which both runs must name among the notes gathered at the end. The batch runs at its
default --jobs; autograde on an nbgrader course made as docs/instructors.md says (`grader nbgrader`,
generate_assignment, each student's modules in submitted/STUDENT/attention-by-hand/ with the notebook). Each run's
output goes to a file, not a terminal, so its progress is a line a minute (every EVERY seconds when given, set in
the run's own process: a small class ends within the minute). The file is read as it grows, each progress line
timed when it appears. For each run, a row per progress line: seconds since the start, graded/total, the time left
as estimated, the time left as it turned out (the moment the last line appeared less this one's), and the
estimate's error; then the wall time, the load average before and after, and what the log holds at the end: the
notes gathered, and for autograde the checksum warnings left in it (0 is right: they are the expected ones).
"""

import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine
from bench_batch import ASSIGNMENT, NBGRADER_PYTHON, nbgrader, nbgrader_env, nbgrader_missing
from bench_batch import submit as submit_to_nbgrader
from bench_shards import make_class

from grader.course.answering import COPIED
from grader.paths import MODULES, SOLUTIONS_DIR

POLL = 0.25  # seconds between two reads of a growing log
LINE = re.compile(r"^(\d+)/(\d+) graded \(\d+%\), ([\d:]+) so far(?:, about ([\d:]+) left)?")
CHECKSUM = re.compile(r"Attribute 'checksum' for cell \S+ has changed")
NOTES = "For you to look at:"
# Runs a module as `python -m` does, with the progress lines EVERY seconds apart: python -c PACED EVERY MODULE ARGS...
PACED = (
    "import runpy, sys\n"
    "import grader.course.progress as progress\n"
    "progress.EVERY, module = float(sys.argv[1]), sys.argv[2]\n"
    "del sys.argv[1:3]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


def command(python: Path, module: str, args: list[str], every: float | None) -> list[str]:
    """`python -m module args`, paced when every is given."""
    if every is None:
        return [str(python), "-m", module, *args]
    return [str(python), "-c", PACED, str(every), module, *args]


def run_logged(argv: list[str], cwd: Path, env: dict, log: Path) -> tuple[list, float, int]:
    """Run argv, its output to log; each line of the log with the seconds since the start when it was read, the wall
    time and the exit status."""
    seen: list[tuple[float, str]] = []
    pending = b""
    start = time.perf_counter()
    with log.open("wb") as out, log.open("rb") as reading:
        process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
        while True:
            try:
                process.wait(timeout=POLL)
            except subprocess.TimeoutExpired:
                pass
            now = time.perf_counter() - start
            *complete, pending = (pending + reading.read()).split(b"\n")
            seen += [(now, line.decode("utf-8", "replace")) for line in complete]
            if process.returncode is not None:
                break
    if pending:
        seen.append((now, pending.decode("utf-8", "replace")))
    return seen, now, process.returncode


def seconds(text: str) -> int:
    """'h:mm:ss' or 'm:ss' as seconds."""
    total = 0
    for part in text.split(":"):
        total = total * 60 + int(part)
    return total


def report(name: str, seen: list[tuple[float, str]], wall: float, status: int) -> list[str]:
    """Print the run's progress table and wall time; what is wrong with its progress."""
    rows = [(t, match) for t, line in seen if (match := LINE.match(line))]
    print(f"\n{name}: exit status {status}, wall time {wall:.0f} s ({wall / 60:.1f} min)")
    if not rows or rows[-1][1][1] != rows[-1][1][2]:
        return [f"{name}: no last progress line (graded/total with all graded) in the log"]
    end = rows[-1][0]
    print(f"{'seconds':>8} {'graded':>9} {'left, said':>11} {'left, real':>11} {'error':>14}")
    for t, match in rows:
        said = f"{seconds(match[4])} s" if match[4] else "-"
        error = ""
        if match[4]:
            off = seconds(match[4]) - (end - t)
            error = f"{off:+.0f} s" + (f" ({off / (end - t):+.0%})" if end - t >= 1 else "")
        print(f"{t:8.0f} {match[1] + '/' + match[2]:>9} {said:>11} {end - t:9.0f} s {error:>14}")
    return [f"{name}: exit status {status}"] if status else []


def notes(name: str, lines: list[str], copier: str) -> list[str]:
    """Print whether the notes for the instructor are at the end of the log; what is missing."""
    at = next((n for n, line in enumerate(lines) if line == NOTES), None)
    named = at is not None and any(
        line.startswith(f"  {copier}") for line in lines[at:]
    )  # under the COPIED kind
    said = at is not None and any(line.startswith(COPIED) for line in lines[at:])
    print(
        f"{name}: notes at the end: {'yes' if said else 'NO'}, {copier} named: {'yes' if named else 'NO'}"
    )
    return [] if said and named else [f"{name}: {copier} not among the notes at the end"]


def batch(work: Path, folders: list[Path], every: float | None) -> list[str]:
    """Grade the class with `grader batch` at its default --jobs, its output in a log; what is wrong."""
    args = ["batch", *map(str, folders), "--csv", str(work / "grades.csv")]
    print(f"\nload average before batch: {machine.load()}", flush=True)
    seen, wall, status = run_logged(
        command(Path(sys.executable), "grader", args, every),
        work,
        dict(os.environ),
        work / "batch.log",
    )
    print(f"load average after batch: {machine.load()}")
    wrong = report("grader batch", seen, wall, status)
    return wrong + notes("grader batch", [line for _, line in seen], folders[-1].name)


def autograde(work: Path, folders: list[Path], every: float | None) -> list[str]:
    """Grade the class with `nbgrader autograde` on a course made for it, its output in a log; what is wrong."""
    why = nbgrader_missing()
    if why:
        return [f"nbgrader autograde: not run, {why}"]
    course = work / "course"
    made = subprocess.run(
        [str(NBGRADER_PYTHON), "-m", "grader", "nbgrader", str(course)],
        capture_output=True,
        text=True,
    )
    if made.returncode or nbgrader(course, "generate_assignment", ASSIGNMENT)[0]:
        return [f"nbgrader autograde: the course could not be made: {made.stdout + made.stderr}"]
    for folder in folders:
        submit_to_nbgrader(course, folder.name, folder)
    print(f"\nload average before autograde: {machine.load()}", flush=True)
    argv = command(NBGRADER_PYTHON, "nbgrader", ["autograde", ASSIGNMENT], every)
    seen, wall, status = run_logged(argv, course, nbgrader_env(course), work / "autograde.log")
    print(f"load average after autograde: {machine.load()}")
    wrong = report("nbgrader autograde", seen, wall, status)
    lines = [line for _, line in seen]
    left_in = sum(1 for line in lines if CHECKSUM.search(line))
    left_out = next((line for line in lines if line.startswith("Left out of the log:")), "")
    print(
        f"nbgrader autograde: {len(lines)} lines of log; checksum warnings in it: {left_in}; {left_out or 'NO line on those left out'}"
    )
    if left_in or not left_out:
        wrong.append(
            f"nbgrader autograde: {left_in} checksum warnings in the log, said left out: {bool(left_out)}"
        )
    return wrong + notes("nbgrader autograde", lines, folders[-1].name)


def main(size: int, seed: int, every: float | None) -> int:
    print(f"load average at the start: {machine.load()} on {os.cpu_count()} cores", flush=True)
    ticks = machine.cpu_times()
    with contextlib.ExitStack() as kept:
        work = Path(
            os.environ.get("BENCH_KEEP") or kept.enter_context(tempfile.TemporaryDirectory())
        )
        folders = [work / "class" / name for name in sorted(make_class(work / "class", size, seed))]
        for module in MODULES:  # the last student hands in the reference, byte for byte
            (folders[-1] / f"{module}.py").write_bytes(
                (SOLUTIONS_DIR / f"{module}.py").read_bytes()
            )
        print(
            f"{size} submissions (seed {seed}), a progress line "
            + (f"every {every:g} s" if every is not None else "a minute (the kit's)")
        )
        wrong = batch(work, folders, every) + autograde(work, folders, every)
        for line in wrong:
            print("  WRONG:", line)
        if wrong:
            for log in ("batch.log", "autograde.log"):
                if (work / log).is_file():
                    print(
                        f"the end of {log}:",
                        *(work / log).read_text().splitlines()[-15:],
                        sep="\n  ",
                    )
    print(
        f"\nload average at the end: {machine.load()}; {machine.stolen(ticks, machine.cpu_times())}"
    )
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(
        main(
            int(sys.argv[1]) if len(sys.argv) > 1 else 300,
            int(sys.argv[2]) if len(sys.argv) > 2 else 0,
            float(sys.argv[3]) if len(sys.argv) > 3 else None,
        )
    )
