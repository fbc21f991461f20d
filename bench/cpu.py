"""The CPU time of a grading run's processes, by kind: the grader, the process beside it, the workers, the reference helper.

Each process's CPU time (user and system) is read every SAMPLE seconds while the run lasts (psutil),
and the last reading kept: a process that ends between two readings loses what it spent meanwhile.
"""

import subprocess
import time

import psutil

SAMPLE = 0.02
KINDS = {  # a word of each process's command line, and what it is
    "grader.check.beside": "the process beside",
    "grader.sandbox.helper": "the reference helper",
    "grader/sandbox/": "workers",
}


def kind(name: str, command: str, root: bool) -> str | None:
    """What a process of the run is, by its name and command line; None for one that runs no Python (bubblewrap)."""
    if root:
        return "the grader"
    if not name.startswith("python"):
        return None
    return next((found for word, found in KINDS.items() if word in command), "other Python processes")


def by_kind(argv: list[str], env: dict | None = None) -> tuple[float, dict[str, tuple[int, float]]]:
    """Run argv; its wall seconds, and for each kind of process how many there were and their CPU seconds in all."""
    began = time.perf_counter()
    run = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    root, seen = psutil.Process(run.pid), {}  # pid -> (kind, CPU seconds)
    forked = " ".join(argv)  # the command line of a fork of the grader not yet running its own program
    while run.poll() is None:
        try:
            processes = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        for process in processes:
            try:
                command = " ".join(process.cmdline())  # read again each time: a fork runs its own program later
                if not command and process.pid in seen:  # an ending process shows none: it stays what it was
                    known = seen[process.pid][0]
                else:
                    known = kind(process.name(), command, process is root) if process is root or command != forked else None
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
