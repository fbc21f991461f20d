"""The CPUs this process may keep busy: the cores it may run on, fewer under a cgroup's CPU quota (a container's, a pod's)."""

import math
import os
from pathlib import Path, PurePosixPath

CGROUP = Path("/sys/fs/cgroup")
OWN = Path("/proc/self/cgroup")


def usable_cpus(root: Path = CGROUP, own: Path = OWN) -> int:
    """The cores of this process's affinity, or its cgroups' least CPU quota rounded up if smaller; at least 1, on every OS."""
    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )
    quotas = [quota for folder, name in cgroups(root, own) if (quota := cpu_quota(folder, name))]
    return max(1, min([cores, *(math.ceil(quota) for quota in quotas)]))


def cgroups(root: Path, own: Path) -> list[tuple[Path, str]]:
    """(folder, "v1" or "v2") of each cgroup that may limit this process's CPU: its own and those above it."""
    try:
        lines = own.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []  # not Linux, or no cgroups
    found = []
    for _, controllers, path in (line.split(":", 2) for line in lines if line.count(":") >= 2):
        if controllers == "" or "cpu" in controllers.split(","):
            version, mount = ("v2", root) if controllers == "" else ("v1", root / "cpu")
            inner = PurePosixPath(path.lstrip("/"))
            found += [(mount / folder, version) for folder in (inner, *inner.parents)]
    return found


def cpu_quota(folder: Path, version: str) -> float | None:
    """The CPUs' worth of time one cgroup allows per period (cgroup v2's cpu.max, v1's cpu.cfs_quota_us), None if unlimited."""
    try:
        if version == "v2":
            quota, period = (folder / "cpu.max").read_text(encoding="utf-8").split()
        else:
            quota, period = (
                (folder / f"cpu.cfs_{name}_us").read_text(encoding="utf-8").strip()
                for name in ("quota", "period")
            )
        return int(quota) / int(period) if quota not in ("max", "-1") and int(period) > 0 else None
    except (OSError, ValueError):
        return None
