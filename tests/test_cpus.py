"""The CPUs a process may use, read from fake cgroup folders: the cores of its affinity, fewer under a quota."""

import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.cpus import usable_cpus

CORES = 8
# this machine's, before patching
HERE = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.fixture(autouse=True)
def eight_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(CORES)), raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # the host's: more than the process may use


def cgroup(tmp_path, lines: str, files: dict[str, str]):
    """A fake /sys/fs/cgroup with these files and a fake /proc/self/cgroup: (root, own)."""
    tmp_path.mkdir(exist_ok=True)
    root, own = tmp_path / "cgroup", tmp_path / "own"
    own.write_text(lines)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root, own


# files written each time: a busy machine's disk has no deadline
@settings(max_examples=50, deadline=None)
@given(quota=st.integers(1000, 10**7), period=st.integers(1000, 10**6))
def test_a_cgroup_v2_quota_rounded_up_within_the_cores(tmp_path_factory, quota, period):
    # rewritten each time
    root, own = cgroup(
        tmp_path_factory.getbasetemp() / "v2", "0::/\n", {"cpu.max": f"{quota} {period}\n"}
    )
    assert usable_cpus(root, own) == min(CORES, math.ceil(quota / period))


def test_the_tightest_quota_on_the_way_up_counts(tmp_path):
    files = {
        "kubepods/pod1/cpu.max": "200000 100000\n",
        "kubepods/pod1/ctr/cpu.max": "max 100000\n",
        "cpu.max": "max 100000",
    }
    assert usable_cpus(*cgroup(tmp_path, "0::/kubepods/pod1/ctr\n", files)) == 2


def test_a_cgroup_v1_quota(tmp_path):
    lines = "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n"
    files = {
        "cpu/docker/abc/cpu.cfs_quota_us": "150000\n",
        "cpu/docker/abc/cpu.cfs_period_us": "100000\n",
    }
    assert usable_cpus(*cgroup(tmp_path, lines, files)) == 2
    files = {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}
    assert usable_cpus(*cgroup(tmp_path / "unlimited", "3:cpu,cpuacct:/\n", files)) == CORES


def test_a_quota_below_one_cpu_still_gives_one(tmp_path):
    assert usable_cpus(*cgroup(tmp_path, "0::/\n", {"cpu.max": "20000 100000\n"})) == 1


@pytest.mark.parametrize(
    "lines, files",
    [
        ("0::/\n", {"cpu.max": "max 100000\n"}),  # no limit
        ("0::/\n", {}),  # the cpu controller not enabled
        ("0::/\n", {"cpu.max": "half of one\n"}),  # unreadable
        ("garbage\n1:cpuset:/\n", {"cpu.max": "100000 100000\n"}),  # no cpu line
    ],
)
def test_without_a_readable_quota_the_cores_of_the_affinity(tmp_path, lines, files):
    assert usable_cpus(*cgroup(tmp_path, lines, files)) == CORES


def test_where_there_are_no_cgroups_nor_affinity_the_cores(tmp_path, monkeypatch):
    """macOS and Windows: no /proc/self/cgroup and no os.sched_getaffinity."""
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert usable_cpus(tmp_path / "none", tmp_path / "no-such-file") == 4
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert usable_cpus(tmp_path / "none", tmp_path / "no-such-file") == 1


def test_this_machine_gives_at_least_one_and_no_more_than_its_cores(monkeypatch):
    monkeypatch.undo()
    assert 1 <= usable_cpus() <= HERE
