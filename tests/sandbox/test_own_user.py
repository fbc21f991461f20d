"""The "user" isolation (a grader as root without namespaces, as in a container): attacks get nothing there either.

The kit's own interpreter may sit where other users cannot reach (here under /root), so this
builds a grader environment from the system's python3 in a folder every user may enter, with a
copy of the kit readable by root alone, and grades a batch of attacks beside an honest submission
with ATTENTION_BY_HAND_ISOLATION=user.
"""

import csv
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import pytest
from attackers import ATTACKS, SECRET, Listener, attack, digest, honest
from commands import batch_command
from survivors import Adopted

from grader.paths import KIT_ROOT
from grader.sandbox.isolation import landlock_abi

CASES = (
    "reads_reference_by_path",
    "environment_leak",
    "kills_everything",
    "daemon_rewrites_results",
    "fork_bomb",
    "overwrites_neighbours",
    "proc_parent_mem",
    "fills_tmp",
    "gc_hunt",
    "pid_hopper",
    "network_call",
)
SYSTEM_PYTHON = Path("/usr/bin/python3")

pytestmark = [
    pytest.mark.linux("a user of the worker's own, with Landlock, is Linux's"),
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def grader_env():
    """(python, kit) for a grader other users' processes can run: a venv from the system python, a root-only kit."""
    if os.geteuid() != 0:
        pytest.skip("the user isolation is for a grader running as root; this test run is not root")
    if not SYSTEM_PYTHON.exists():
        pytest.skip(
            f"no {SYSTEM_PYTHON} that every user may run, to build the grader's environment from"
        )
    base = Path(tempfile.mkdtemp(prefix="abh-own-user-"))
    try:
        os.chmod(base, 0o755)
        subprocess.run(
            [str(SYSTEM_PYTHON), "-m", "venv", str(base / "venv")], check=True, timeout=120
        )
        python = base / "venv" / "bin" / "python"
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                *tomllib.loads((KIT_ROOT / "pyproject.toml").read_text())["project"][
                    "dependencies"
                ],
            ],
            check=True,
            timeout=600,
            capture_output=True,
        )
        kit = base / "kit"
        kit.mkdir(mode=0o700)
        for name in ("grader", "solutions", "exercises", "data"):
            shutil.copytree(
                KIT_ROOT / name, kit / name, ignore=shutil.ignore_patterns("__pycache__", ".grader")
            )
        yield python, kit
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_attacks_as_a_user_of_their_own_get_nothing(grader_env, tmp_path):
    python, kit = grader_env
    root = tmp_path / "submissions"
    root.mkdir()
    os.chmod(tmp_path, stat.S_IRWXU)
    listener = Listener()
    cases = [attack(root, ATTACKS / f"{name}.py", listener.port) for name in CASES]
    good, _ = honest(root)
    folders, before = [good, *cases], digest([good, kit])
    csv_file = tmp_path / "grades.csv"
    env = {
        **os.environ,
        "ATTENTION_BY_HAND_ISOLATION": "user",
        "PYTHONPATH": str(kit),
        "INSTRUCTOR_TOKEN": SECRET,
        "NO_COLOR": "1",
    }
    command = batch_command(folders, csv_file, python)
    with Adopted(
        command, tmp_path, timeout=900, cwd=tmp_path, env=env
    ) as run:  # whatever it leaves stays below it
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        time.sleep(1.0)
        assert run.survivors() == []
    text = csv_file.read_text(encoding="utf-8")
    rows = {r["student"]: r for r in csv.DictReader(text.splitlines())}
    assert SECRET not in text and "forged" not in text and len(rows) == len(folders)
    # Landlock narrows the user's view where the kernel has it
    tier = "user+landlock" if landlock_abi() else "user"
    for name in CASES:
        assert (rows[name]["total"], rows[name]["isolation"]) == ("0.0", tier), (
            name,
            rows[name]["reason"][:300],
        )
    assert rows["honest_good"]["total"] == "100.0"
    assert digest([good, kit]) == before
    # no TCP connection: the seccomp filter, and Landlock's network rule from ABI 4
    assert listener.received == []
    assert not list(Path("/tmp").glob("abh-attack*")) and not list(
        Path("/var/tmp").glob("abh-attack*")
    )
    assert sys.executable != str(python)  # the grader ran in its own environment, not this test's
