"""The CPU time of a grading run's processes, by kind: the grader, the workers, the reference helper.

Each process's CPU time (user and system) is read every SAMPLE seconds while the run lasts (psutil),
and the last reading kept: a process that ends between two readings loses what it spent meanwhile.
"""

import subprocess
import time

import psutil

SAMPLE = 0.02
KINDS = {  # a word of each process's command line, and what it is
    "grader.sandbox.helper": "the reference helper",
    "grader/sandbox/": "workers",
}


def kind(
    process: psutil.Process, root: psutil.Process, forked: str, before: str | None
) -> str | None:
    """What a process of the run is, by its name and command line; None for one that runs no Python (bubblewrap), or
    a fork of the grader not yet running its own program (forked: the grader's command line). before: what it was."""
    if process is root:
        return "the grader"
    command = " ".join(process.cmdline())  # read every time: a fork runs its own program later
    if not command:  # an ending process shows none: it stays what it was
        return before
    if command == forked or not process.name().startswith("python"):
        return None
    return next(
        (found for word, found in KINDS.items() if word in command), "other Python processes"
    )


def by_kind(argv: list[str], env: dict | None = None) -> tuple[float, dict[str, tuple[int, float]]]:
    """Run argv; its wall seconds, and for each kind of process how many there were and their CPU seconds in all."""
    began = time.perf_counter()
    run = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    # pid -> (kind, CPU seconds)
    root, seen = (psutil.Process(run.pid), dict[int, tuple[str | None, float]]())
    forked = " ".join(argv)
    while run.poll() is None:
        try:
            processes = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        for process in processes:
            try:
                known = kind(process, root, forked, seen.get(process.pid, (None, 0.0))[0])
                spent = process.cpu_times()
            except psutil.Error:
                continue
            seen[process.pid] = (known, spent.user + spent.system)
        time.sleep(SAMPLE)
    wall = time.perf_counter() - began
    found: dict[str, tuple[int, float]] = {}
    for known, seconds in seen.values():
        if known is not None:
            count, total = found.get(known, (0, 0.0))
            found[known] = (count + 1, total + seconds)
    return wall, found
