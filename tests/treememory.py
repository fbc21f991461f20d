"""The memory a process tree holds, as a container's limit counts it: each page once (PSS summed), sampled until the root ends."""

import subprocess
import time

import psutil

SAMPLE = 0.02  # seconds between samples


def held(process: psutil.Process) -> int:
    """A process's proportional set size: its own pages, and its share of those it shares (a fork before its exec shares them all)."""
    try:
        return process.memory_full_info().pss
    except (
        AttributeError,
        psutil.AccessDenied,
    ):  # no PSS here: the resident set, which counts shared pages in each process
        return process.memory_info().rss


def _held_or_gone(process: psutil.Process) -> int:
    try:
        return held(process)
    except psutil.NoSuchProcess:
        return 0


def peak_tree(process: subprocess.Popen, peaks: list) -> None:
    """Thread: the largest memory the process and all it started held at once, until it ends (appended to peaks)."""
    root, top = psutil.Process(process.pid), 0
    while process.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            break  # the root is gone
        top = max(top, sum(_held_or_gone(p) for p in tree))
        time.sleep(SAMPLE)
    peaks.append(top)
