"""Time from a save to its verdict under a live `grader watch`, per exercise.

Usage: python3 bench/bench_watch.py [SAVES]   (default 6 saves per exercise: 3 written, 3 stubs)
The watch runs in the student's kit, written by `grader release` into a temporary folder, as a
student runs it: public checks, each exercise built on the student's own earlier ones (here the
reference's). Each save alternates the reference module and a stub, so every save changes the verdict; the stub
is the stub as given with a comment added (an untouched stub is known without running it). The target is
judged on the saves of the written exercise, whose every check runs to its end; a stub's checks stop at
their first call, so its saves are printed apart. Target:
from a save to its verdict within 1x the machine's floor, a fresh
`python -c "import numpy, pytest, hypothesis"`, measured in the same run. Also timed: from the save
to the screen that says the exercise is being checked.
"""

import os
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

import machine
from kits import student_kit

from grader.course.stubs import stub_source
from grader.exercises import NAMES
from grader.paths import SOLUTIONS_DIR

CHECKING = re.compile(r": checking \(started")  # the target's line while its check runs
# the header of the first screen with a verdict after a save
VERDICT = re.compile(r"after your save")
SCREEN = re.compile(r"^grader watch · ")  # the header of every screen


def lines_of(proc):
    """A queue that receives the watcher's output, line by line."""
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    return lines


def settle(lines, quiet=2.0):
    """Wait until the watcher has printed nothing for `quiet` seconds (its first checks are done)."""
    while True:
        try:
            lines.get(timeout=quiet)
        except queue.Empty:
            return


def next_line(lines, pattern, timeout=60.0):
    """Block until the watcher prints a line matching the pattern; return the moment it arrived."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.05)
        except queue.Empty:
            continue
        if pattern.search(line):
            return time.monotonic()
    raise SystemExit(f"no line matching {pattern.pattern!r} within {timeout:g} s")


def save(path, text):
    """Write a file so that its modification time moves."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def time_exercise(kit, folder, name, saves):
    """Seconds from each save of name's module to the checking screen, and to the verdict, printed for it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "watch", name, "--submission", str(folder)],
        cwd=kit,
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "NO_COLOR": "1",
        },  # bytecode kept, as on a student's machine
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = lines_of(proc)
    try:
        next_line(lines, SCREEN)  # its first screen: quiet before it is only the watch starting
        settle(lines)
        checking, verdict = [], []
        for index in range(saves):
            text = (
                (SOLUTIONS_DIR / f"{name}.py").read_text()
                if index % 2 == 0
                else stub_source(name) + "# saved\n"
            )
            settle(lines, quiet=3.0)
            saved = time.monotonic()
            save(folder / f"{name}.py", text)
            checking.append(next_line(lines, CHECKING) - saved)
            verdict.append(next_line(lines, VERDICT) - saved)
        return checking, verdict
    finally:
        proc.send_signal(signal.SIGINT)  # as Ctrl-C: the watch ends the check it keeps ready
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise SystemExit("the watch did not end within 30 s of Ctrl-C") from None


def floor(runs: int = 5) -> float:
    """The median seconds of a fresh `python -c "import numpy, pytest, hypothesis"`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import numpy, pytest, hypothesis"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    saves = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    # started in the background, a shell may have Ctrl-C ignored, and the watches would inherit that
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if saves < 2:
        raise SystemExit(
            "SAVES is at least 2: the saves alternate between the exercise written and its stub."
        )
    print(f"load average before: {machine.load()} on {os.cpu_count()} cores")
    ticks = machine.cpu_times()
    base = floor()
    print(f"floor (python -c 'import numpy, pytest, hypothesis'): median {base:.2f} s")
    kit = student_kit()
    try:
        folder = kit / "exercises"
        for name in NAMES:
            shutil.copy(SOLUTIONS_DIR / f"{name}.py", folder / f"{name}.py")
        for name in NAMES:
            (folder / f"{name}.py").write_text(stub_source(name))
            checking, verdict = time_exercise(kit, folder, name, saves)
            shutil.copy(SOLUTIONS_DIR / f"{name}.py", folder / f"{name}.py")
            # the saves alternate: the exercise written, then the stub again
            written, stubbed = (verdict[0::2], verdict[1::2])
            median = statistics.median(written)
            print(
                f"{name:9} save to verdict, written: median {median:.2f} s ({', '.join(f'{s:.2f}' for s in written)}), "
                f"{median / base:.1f}x the floor ({'within' if median <= base else 'OVER'} the 1x target); "
                f"the stub saved again: median {statistics.median(stubbed):.2f} s; to checking shown: median {statistics.median(checking):.2f} s"
            )
    finally:
        shutil.rmtree(kit.parent, ignore_errors=True)
    print(f"load average after: {machine.load()}; {machine.stolen(ticks, machine.cpu_times())}")


if __name__ == "__main__":
    main()
