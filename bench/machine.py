"""What the machine did while a benchmark ran: its load average, and the CPU time a hypervisor took from it.

On a virtual machine the host may run other guests on our cores: that time ("steal" in Linux's
/proc/stat) stretches every wall-clock figure alike, the floor's included, and no load average
shows it. The benchmarks print both, so a run on a crowded host can be told from a slow kit.
"""

import os
from pathlib import Path

STAT = Path("/proc/stat")


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_times() -> list[int] | None:
    """The machine's CPU time so far, in ticks, by Linux's columns (user, nice, system, idle, iowait, irq, softirq, steal); None elsewhere."""
    try:
        return [int(field) for field in STAT.read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None


def _spent(before: list[int] | None, after: list[int] | None) -> list[int] | None:
    """Ticks spent in each of Linux's columns between two readings; None when either is missing."""
    if before is None or after is None or len(before) < 8 or len(after) < 8:
        return None
    return [b - a for a, b in zip(before, after)]


def _busy(spent: list[int]) -> int:
    """The busy ticks: all but idle, iowait and steal."""
    return sum(spent) - spent[3] - spent[4] - spent[7]


def stolen(before: list[int] | None, after: list[int] | None) -> str:
    """A line on the share of the machine's CPU time between two readings that the hypervisor took (steal) and that was busy."""
    if (spent := _spent(before, after)) is None:
        return "CPU time taken by a hypervisor: not known on this OS"
    total = sum(spent) or 1
    return f"of the machine's CPU time meanwhile: {100 * _busy(spent) / total:.0f}% busy, {100 * spent[7] / total:.0f}% taken by the hypervisor (steal)"


def busy_seconds(before: list[int] | None, after: list[int] | None) -> float | None:
    """CPU seconds the machine spent busy between two readings, on all its cores (not steal): a run's own CPU time when
    nothing else ran, counted whatever reaped its processes; None elsewhere."""
    spent = _spent(before, after)
    return None if spent is None else _busy(spent) / os.sysconf("SC_CLK_TCK")
