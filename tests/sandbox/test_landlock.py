"""The landlock tier (a grader neither root nor allowed namespaces: a pod) and the seccomp filter of every tier.

What a worker may do is asked of a worker: a probing softmax tries each thing and returns what
happened ("done" or the error's name), so each test states what must hold in words of outcomes.
"""

import csv
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from attackers import Listener, digest, honest
from hypothesis import given, settings
from hypothesis import strategies as st
from pod import ATTACK, REFUSED, pod
from survivors import Adopted

from grader.course.stubs import write_stubs
from grader.paths import SOLUTIONS_DIR
from grader.sandbox import isolation, linux, seccomp
from grader.sandbox.handle import StudentCode
from grader.sandbox.worker.landlock import handled, ruleset_attr

PROBE = """
import os, signal, socket, threading

def outcome(action):
    try:
        action()
        return "done"
    except OSError as error:
        return type(error).__name__

def write(path):
    with open(path, "w") as file:
        file.write("x")

def softmax(x):
    thread = threading.Thread(target=lambda: None)
    return {
        "tcp": outcome(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2).close()),
        "signal parent": outcome(lambda: os.kill(os.getppid(), 0)),
        "own group": outcome(lambda: os.kill(0, 0)),
        "read reference": outcome(lambda: open(REFERENCE).read()),
        "read neighbour": outcome(lambda: open(NEIGHBOUR).read()),
        "write neighbour": outcome(lambda: write(NEIGHBOUR + ".new")),
        "write home": outcome(lambda: write(os.path.join(os.environ["HOME"], "notes"))),
        "fork": outcome(lambda: os.fork() or os._exit(0)),
        "chmod": outcome(lambda: os.chmod(NEIGHBOUR, 0o600)),
        "thread": outcome(lambda: (thread.start(), thread.join())),
    }
"""
CONFINING = ("namespaces", "user", "landlock")


def probe_folder(tmp_path: Path, port: int) -> tuple[Path, Path]:
    """(a submission whose softmax probes the worker, a neighbour's file it must not reach)."""
    neighbour = tmp_path / "neighbour" / "softmax.py"
    neighbour.parent.mkdir()
    neighbour.write_text("secret = 1\n")
    folder = tmp_path / "probing"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    constants = f"PORT = {port}\nREFERENCE = {str(SOLUTIONS_DIR / 'softmax.py')!r}\nNEIGHBOUR = {str(neighbour)!r}\n"
    (folder / "softmax.py").write_text(constants + PROBE)
    return folder, neighbour


def probed(tmp_path: Path, monkeypatch, tier: str) -> tuple[dict, Listener]:
    """What a worker of this tier managed, and the listener it tried to reach; skipped where the tier cannot be had here."""
    if why := isolation.why_not(tier):
        pytest.skip(f"the {tier} tier cannot be had here: {why}")
    monkeypatch.setenv(isolation.TIER_VAR, tier)
    listener = Listener()
    folder, _ = probe_folder(tmp_path, listener.port)
    with StudentCode(folder) as student:
        found = student.call("softmax", "softmax", [1.0]).value
        assert student.isolation == isolation.choose().name
    return found, listener


pytestmark = pytest.mark.linux("Landlock and seccomp are Linux's")


@pytest.mark.slow
@pytest.mark.parametrize("tier", CONFINING)
def test_a_worker_in_every_confining_tier_opens_no_tcp_connection(tmp_path, monkeypatch, tier):
    found, listener = probed(tmp_path, monkeypatch, tier)
    # the filter's refusal, not a closed port
    assert found["tcp"] == "PermissionError" and listener.received == []
    assert found["thread"] == "done"


@pytest.mark.slow
@pytest.mark.parametrize("abi", [None, 3], ids=["kernel", "abi3"])
def test_the_landlock_worker_reaches_nothing_of_the_graders_whatever_its_abi(
    tmp_path, monkeypatch, abi
):
    """Below ABI 6 (no scoping) and 4 (no TCP rule) the filter refuses the signals and sockets that Landlock cannot."""
    if abi is not None:
        monkeypatch.setattr(isolation, "landlock_abi", lambda: abi)
        monkeypatch.setattr(isolation, "_probed", {})
    found, listener = probed(tmp_path, monkeypatch, "landlock")
    refused = {
        name: "PermissionError"
        for name in (
            "tcp",
            "signal parent",
            "read reference",
            "read neighbour",
            "write neighbour",
            "fork",
            "chmod",
        )
    }
    assert {name: found[name] for name in refused} == refused, found
    assert (found["write home"], found["own group"], found["thread"]) == ("done", "done", "done")
    assert listener.received == []


def test_landlock_refuses_more_with_each_abi():
    sizes = [len(ruleset_attr(abi)) for abi in range(1, 8)]
    assert sizes == [8, 8, 8, 16, 16, 24, 24]
    assert [handled(abi)[1:] for abi in (3, 4, 6)] == [(0, 0), (3, 0), (3, 3)]
    assert all(handled(abi)[0] | handled(abi - 1)[0] == handled(abi)[0] for abi in range(2, 8))


def test_the_filter_of_the_graders_own_user_refuses_more_and_more_below_abi_6():
    if why := seccomp.missing():
        pytest.skip(why)
    base, shared, unscoped = (
        len(seccomp.program(**variant))
        for variant in ({}, {"shared_user": True}, {"shared_user": True, "scoped": False})
    )
    assert 0 < base < shared < unscoped and base % 8 == 0


@st.composite
def trees(draw):
    """A few folders and files below a root, and some folders among them to hide."""
    names = st.sampled_from(["a", "b", "c", "site", "grader"])
    paths = draw(
        st.lists(
            st.lists(names, min_size=1, max_size=4).map(lambda parts: "/".join(parts)),
            min_size=1,
            max_size=12,
        )
    )
    folders = sorted(
        {str(Path(p).parent) for p in paths if str(Path(p).parent) != "."}
        | {p + "_dir" for p in paths[:3]}
    )
    hidden = draw(st.lists(st.sampled_from(folders), max_size=3)) if folders else []
    return [f"{p}.py" for p in paths], folders, hidden


@settings(max_examples=60, deadline=None)
@given(trees())
def test_what_landlock_may_read_covers_every_file_but_the_hidden_folders(tree):
    files, folders, hidden = tree
    with tempfile.TemporaryDirectory() as base:
        root = Path(base)
        for folder in folders:
            (root / folder).mkdir(parents=True, exist_ok=True)
        for file in files:
            (root / file).parent.mkdir(parents=True, exist_ok=True)
            (root / file).touch()
        read, listed = linux.less(root, [(root / h).resolve() for h in hidden])
        for path in [root, *root.rglob("*")]:
            covered = any(path == Path(top) or Path(top) in path.parents for top in read)
            inside_hidden = any(
                (root / h) in [path, *path.parents] for h in hidden if root / h != root
            )
            holds_hidden = not inside_hidden and any(path in (root / h).parents for h in hidden)
            assert covered == (not inside_hidden and not holds_hidden), (path, read, hidden)
            assert (str(path) in listed) == holds_hidden, (path, listed, hidden)


@pytest.mark.slow
def test_in_an_emulated_pod_grader_batch_grades_in_the_landlock_tier_and_the_attack_gets_nothing(
    tmp_path,
):
    """The grader as nobody with user namespaces refused: honest 100, the attack none of what it tried, `landlock` recorded."""
    root, listener = tmp_path / "class", Listener()
    root.mkdir()
    good, _ = honest(root)
    attacker = write_stubs(root / "attacker")
    text = ATTACK.format(
        neighbour=str(good / "softmax.py"),
        reference=str(SOLUTIONS_DIR / "softmax.py"),
        port=listener.port,
    )
    (attacker / "softmax.py").write_text(text.split("\n", 1)[1])
    before, csv_file = digest([good, SOLUTIONS_DIR]), tmp_path / "grades.csv"
    command = pod(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(good),
            str(attacker),
            "--jobs",
            "2",
            "--csv",
            str(csv_file),
        ]
    )
    env = {name: value for name, value in os.environ.items() if name != isolation.TIER_VAR} | {
        "NO_COLOR": "1"
    }
    with Adopted(command, tmp_path, timeout=900, cwd=tmp_path, env=env) as run:
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert run.survivors() == []
    rows = {
        row["student"]: row
        for row in csv.DictReader(csv_file.read_text(encoding="utf-8").splitlines())
    }
    assert (rows["honest_good"]["total"], rows["honest_good"]["isolation"]) == ("100.0", "landlock")
    attack = rows["attacker"]
    assert (attack["total"], attack["isolation"]) == ("0.0", "landlock"), attack
    assert all(re.search(rf"\b{name}:(EACCES|EPERM)\b", attack["reason"]) for name in REFUSED), (
        attack["reason"]
    )
    # its grader outlived its kill(-1), as the batch did
    assert attack["status"] == "graded" and "sa:" in attack["reason"]
    assert (
        digest([good, SOLUTIONS_DIR]) == before
        and listener.received == []
        and not Path("/tmp/abh-attack-pod").exists()
    )


@pytest.mark.slow
def test_in_a_pod_without_landlock_batch_says_what_to_do_in_the_instructors_words(monkeypatch):
    from grader.course import batch
    from grader.sandbox.process import GRADER_FAULT

    reasons = {
        "namespaces": "bwrap: Creating new namespace failed",
        "user": "it needs the grader to run as root",
    }
    monkeypatch.setattr(
        isolation,
        "_probe",
        lambda tier: (
            reasons.get(tier) or ("Landlock is not available here" if tier == "landlock" else "")
        ),
    )
    monkeypatch.delenv(isolation.TIER_VAR, raising=False)
    said = batch.isolation_problem(False)
    assert (
        "landlock: Landlock is not available here" in said
        and "Kubernetes" in said
        and "--allow-unisolated" in said
    )
    assert GRADER_FAULT not in said and "your code" not in said
