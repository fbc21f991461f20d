"""A call's time limit, counted in CPU seconds of the worker's processes, with a wall-clock backstop (psutil, every OS).

A busy machine slows a call on the clock but hardly in CPU time, so the limit that judges the
student is CPU time, as DOMjudge and Google's sandbox2 count it. A call that waits (a sleep, a
read, a lock) uses no CPU: a wall-clock limit WALL_FACTOR times as long stops it, unless it is
still computing (it is then only slowed by the machine's load), and HARD_FACTOR times stops any.
"""

import os
import time

import psutil

WALL_FACTOR = 2.0  # the wall-clock backstop of a call that hardly computes (one that computes has HARD_FACTOR)
HARD_FACTOR = 10.0  # the clock's last word, computing or not
BUSY = 0.1  # share of one core a call uses while it computes, however loaded the machine (a sleeping loop: about 0.01)
TREE_EVERY = 1.0  # seconds between looks for processes the worker started (a look reads every process's status)
SAMPLE_EVERY = (
    0.5  # seconds a sample of the worker's CPU time serves as the start of the calls that follow
)
CORES = max(os.cpu_count() or 1, 1)  # read once, not on every call to the worker


def cpu_seconds(process: psutil.Process) -> float:
    """The user and system CPU seconds of a process and of its children it has waited for; 0 once it is gone."""
    try:
        times = process.cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system + times.children_user + times.children_system


class Sample:
    """The CPU seconds of the worker's processes at one moment, taken again once it is SAMPLE_EVERY old.

    A call's CPU time is counted from the latest sample, so one taken before the call also counts
    what the calls since then used: at most the time since the sample, which the limit then adds
    back. A quick call costs no look at its processes at all.
    """

    def __init__(self):
        self.taken, self.seconds = -SAMPLE_EVERY, {}

    def latest(self, tree: list) -> tuple[float, dict]:
        """(when, {pid: CPU seconds}) of a sample at most SAMPLE_EVERY old."""
        if time.monotonic() - self.taken >= SAMPLE_EVERY:
            self.taken, self.seconds = time.monotonic(), {p.pid: cpu_seconds(p) for p in tree}
        return self.taken, self.seconds


class Clock:
    """One exchange's two limits: `limit` CPU seconds of the worker's process tree, and WALL_FACTOR times that on the clock.

    The tree is looked up only once the call has run long enough on the clock that its CPU time
    could have reached the limit on every core of this machine.
    """

    def __init__(
        self, root_pid: int, limit: float, tree: list | None = None, sample: Sample | None = None
    ):
        self.limit, self.wall = limit, limit * WALL_FACTOR
        self.started = time.monotonic()
        self.tree = tree if tree is not None else _tree(root_pid)
        self.root_pid = root_pid
        taken, self.before = (sample or Sample()).latest(self.tree)
        # CPU the calls since the sample may have used, counted in `used` but not the call's
        self.slack = self.started - taken
        self.earliest = self.started + limit / CORES  # no CPU limit can be reached before this
        self.looked = self.started
        # (when, CPU seconds used) and the CPU share since
        self.sample, self.rate = ((self.started, 0.0), 1.0)

    def wall_left(self) -> float:
        """Seconds left on the clock before the backstop (a call still computing has until HARD_FACTOR times the limit)."""
        return (
            self.started
            + (self.wall if self.rate < BUSY else self.limit * HARD_FACTOR)
            - time.monotonic()
        )

    def used(self) -> float:
        """CPU seconds the worker's processes used since the exchange began, new processes counted in full."""
        if time.monotonic() - self.looked >= TREE_EVERY:
            self.tree, self.looked = _tree(self.root_pid) or self.tree, time.monotonic()
        return sum(max(cpu_seconds(p) - self.before.get(p.pid, 0.0), 0.0) for p in self.tree)

    def over(self) -> str | None:
        """Which limit the call is over ("cpu" or "wall"), or None."""
        now = time.monotonic()
        if now < self.earliest:
            return None
        used = self.used()
        if now - self.sample[0] >= TREE_EVERY:
            self.rate, self.sample = (used - self.sample[1]) / (now - self.sample[0]), (now, used)
        if used >= self.limit + self.slack:
            return "cpu"
        if (
            now - self.started >= self.limit * HARD_FACTOR
            or self.wall_left() <= 0
            and self.rate < BUSY
        ):
            return "wall"
        return None

    def said(self, which: str) -> str:
        """The words for the limit that stopped the call, for the student's message."""
        if which == "cpu":
            return f"{self.limit:g} s of CPU time"
        return (
            f"{time.monotonic() - self.started:.0f} s on the clock, the wall-clock limit, having used {max(self.used() - self.slack, 0):.2f} s of its {self.limit:g} s "
            "of CPU time: look for a sleep, a wait or a read that never ends"
        )


def _tree(root_pid: int) -> list:
    """The worker's process and every process below it, as psutil sees them now."""
    try:
        root = psutil.Process(root_pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []
