"""Attacks on the grades (tests/attacks/): graded with `grader batch` beside honest submissions, as a course would.

What must hold afterwards: every attack earns exactly what its honest work earns (nothing);
the honest submissions get their own scores, their files untouched; the kit, site-packages and
the CSV are as the grader made them; no process of any attack survives; no secret of the
grader's environment reaches the CSV. These need isolation: where the machine cannot confine
the students' code, the test says so and fails (it never runs an attack unconfined).
"""

import csv
import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import psutil
import pytest
from attackers import (
    ATTACKS,
    REFUSED,
    SECRET,
    Listener,
    attack,
    digest,
    honest,
    kit_and_site,
    planted,
    refused,
    require_isolation,
)
from busy import allowed
from commands import batch_command
from pod import pod
from survivors import Adopted

from grader.check.checks import replay

pytestmark = [
    pytest.mark.linux(
        "the attacks use /proc, fork and POSIX signals, and only Linux confines them"
    ),
    pytest.mark.slow,
]


@pytest.mark.parametrize("where", ["here", "pod"])
def test_no_attack_gains_a_point_or_touches_anything_else(tmp_path, where):
    """here: in the strongest tier of this machine; pod: as nobody with user namespaces refused, so in the landlock tier."""
    tier = require_isolation() if where == "here" else "landlock"
    root, listener = tmp_path / "submissions", Listener()
    root.mkdir()
    cases = [attack(root, path, listener.port) for path in sorted(ATTACKS.glob("*.py"))]
    cases += planted(root) + refused(root)
    good, partial = honest(root)
    folders = [good, *cases, partial]
    records = kept_examples(tmp_path)
    honest_files, before = digest([good, partial]), kit_and_site()
    csv_file = tmp_path / "grades.csv"
    command = batch_command(folders, csv_file)
    command = pod(command) if where == "pod" else command
    env = {**os.environ, "INSTRUCTOR_TOKEN": SECRET, "NO_COLOR": "1"}
    with Adopted(
        command, tmp_path, timeout=900, cwd=tmp_path, env=env
    ) as run:  # whatever it leaves stays below it
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        time.sleep(1.0)  # a daemon that escaped would rewrite the CSV within 0.1 s
        assert run.survivors() == []
    text = csv_file.read_text(encoding="utf-8")
    rows = {r["student"]: r for r in csv.DictReader(text.splitlines())}
    assert len(rows) == len(folders) and "forged" not in text and SECRET not in text
    for folder in cases:
        name = folder.name
        got = rows[name]
        if name in REFUSED:
            assert got["status"] == "unreadable" and (
                "link" in got["reason"] or "reference folder" in got["reason"]
            ), (name, got)
        else:
            assert (got["status"], got["total"], got["isolation"]) == ("graded", "0.0", tier), (
                name,
                got["reason"][:300],
            )
    assert rows["honest_good"]["status"] == "passed" and rows["honest_good"]["total"] == "100.0"
    assert rows["honest_partial"]["total"] == alone(partial, tmp_path)
    assert digest([good, partial]) == honest_files
    assert kit_and_site() == before
    # the grader's records of Hypothesis' examples, as it wrote them
    assert digest([replay.folder()]) == records
    assert listener.received == []
    assert not list(Path("/tmp").glob("abh-attack*")) and not list(
        Path("/var/tmp").glob("abh-attack*")
    )


def kept_examples(tmp_path: Path) -> dict[str, str]:
    """The digests of the grader's records of Hypothesis' examples, every check's written first (the attacks target them)."""
    subprocess.run(
        [sys.executable, "-m", "grader", "check", "--solutions"],
        capture_output=True,
        timeout=300,
        cwd=tmp_path,
    )
    records = digest([replay.folder()])
    assert len(records) >= 20 and all(path.endswith(".examples") for path in records), sorted(
        records
    )[:5]
    return records


def alone(folder: Path, tmp_path: Path) -> str:
    """A submission's total when `grader check` grades it by itself."""
    out = tmp_path / "alone.json"
    subprocess.run(
        [sys.executable, "-m", "grader", "check", "--submission", str(folder), "--json", str(out)],
        capture_output=True,
        timeout=300,
        cwd=tmp_path,
    )
    return f"{json.loads(out.read_text())['total']['points']:.1f}"


def test_terminal_escapes_from_student_code_reach_no_terminal_and_no_csv(tmp_path):
    """What student code prints or raises is shown with its control characters escaped: no forged screen, in check or batch."""
    require_isolation()
    folder = attack(tmp_path, ATTACKS / "forges_the_terminal.py", 0)
    out, csv_file = tmp_path / "result.json", tmp_path / "grades.csv"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "check",
            "softmax",
            "--submission",
            str(folder),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
    )
    batch = subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(folder), "--csv", str(csv_file)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
    )
    shown = (
        run.stdout + run.stderr + batch.stdout + batch.stderr + csv_file.read_text(encoding="utf-8")
    )
    assert not [c for c in shown if unicodedata.category(c) == "Cc" and c not in "\n\r\t"], shown[
        :2000
    ]
    assert "\\x1b[2J" in run.stdout and "raised ValueError" in run.stdout  # escaped, there to read
    assert run.returncode == 1 and json.loads(out.read_text())["total"]["points"] == 0.0


def test_a_huge_reply_is_refused_without_the_grader_growing(tmp_path):
    require_isolation()
    folder = attack(tmp_path, ATTACKS / "huge_reply.py", 0)
    out = tmp_path / "result.json"
    start, peak = time.monotonic(), 0
    grader = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "check",
            "softmax",
            "--submission",
            str(folder),
            "--json",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    watched = psutil.Process(grader.pid)
    while grader.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    assert time.monotonic() - start < allowed(60) and peak < 400 << 20, (
        time.monotonic() - start,
        peak >> 20,
    )
    messages = [c["message"] for c in json.loads(out.read_text())["exercises"][0]["checks"]]
    assert any("far more than this call should return" in m for m in messages), messages[:1]


def test_the_json_of_a_check_is_the_graders_and_carries_no_secret(tmp_path):
    require_isolation()
    out = tmp_path / "result.json"
    for name in ("environment_leak", "daemon_rewrites_results", "writes_results"):
        folder = attack(tmp_path, ATTACKS / f"{name}.py", 0)
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "check",
                "--submission",
                str(folder),
                "--json",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env={**os.environ, "INSTRUCTOR_TOKEN": SECRET},
        )
        time.sleep(1.0)  # a daemon that escaped rewrites the JSON within 0.1 s
        text = out.read_text(encoding="utf-8")
        assert run.returncode == 1 and SECRET not in text + run.stdout, name
        assert (
            json.loads(text)["total"]["points"] == 0.0 and not (tmp_path / "results.json").exists()
        ), name
