"""Grading processes: one process grades folder after folder as a fresh `grader check` would, and is replaced when
a request runs late or it dies."""

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.course import graders
from grader.course.graders import GradingProcess
from grader.paths import SOLUTIONS_DIR
from grader.sandbox import helper
from grader.sandbox.tree import RUN_VAR, TOKEN_VAR, marked

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"


def folder_of(root: Path, name: str, case: str | None = None) -> Path:
    """A copy of the reference, a hostile case laid over it."""
    folder = root / name
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in (HOSTILE / case).iterdir() if case else ():
        shutil.copy(path, folder / path.name.removesuffix(".hostile"))
    return folder


def total(result: Path) -> float:
    return json.loads(result.read_text())["total"]["points"]


@pytest.mark.slow
def test_one_process_grades_folder_after_folder(tmp_path):
    grading = GradingProcess()
    try:
        first = grading.check(folder_of(tmp_path, "a"), tmp_path / "a.json", 120)
        pid = grading.child.pid
        second = grading.check(folder_of(tmp_path, "b", "nan_output"), tmp_path / "b.json", 120)
        assert grading.child.pid == pid  # the same process, its imports paid once
    finally:
        grading.close()
    assert first[0] == 0 and first[2] is False and total(tmp_path / "a.json") == 100.0
    assert "100" in first[1]  # what the check printed comes back: its report
    assert second[0] == 1 and total(tmp_path / "b.json") < 100.0


@pytest.mark.slow
@pytest.mark.posix("the hostile folder kills its parent process")
def test_a_process_killed_mid_request_gives_no_result_and_the_next_request_a_new_one(tmp_path):
    grading = GradingProcess({**os.environ, "ATTENTION_BY_HAND_ISOLATION": "none"})
    try:
        code, _, timed_out = grading.check(
            folder_of(tmp_path, "killer", "kills_grader"), tmp_path / "k.json", 120
        )
        killed = grading.child.pid
        assert (code is None or code < 0) and not timed_out
        assert not (tmp_path / "k.json").exists()
        code, _, _ = grading.check(folder_of(tmp_path, "good"), tmp_path / "g.json", 120)
        assert grading.child.pid != killed and code == 0 and total(tmp_path / "g.json") == 100.0
    finally:
        grading.close()


@pytest.mark.slow
def test_a_request_past_its_time_ends_the_process_and_all_it_started(tmp_path):
    grading = GradingProcess()
    try:
        _, _, timed_out = grading.check(folder_of(tmp_path, "a"), tmp_path / "a.json", 0.5)
        token = grading.child.token
        assert timed_out  # its status is whoever reaps it first (psutil's wait, or Popen's)
        assert marked(f"{TOKEN_VAR}={token}") == [] and marked(f"{RUN_VAR}={token}") == []
    finally:
        grading.close()


def test_the_reference_helper_carries_no_request_s_mark(monkeypatch):
    """Each request's leftovers are killed by its mark: the helper, which serves every request, must not carry one."""
    monkeypatch.setenv(RUN_VAR, "a-request")
    monkeypatch.setenv(TOKEN_VAR, "the-grading-process")
    env = helper._environment()
    assert RUN_VAR not in env and env[TOKEN_VAR] == "the-grading-process"
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env.get("PATH") == os.environ.get("PATH")


def test_a_process_hands_over_to_a_new_one_after_its_share_of_requests(
    tmp_path, pristine, monkeypatch
):
    monkeypatch.setattr(graders, "REQUESTS", 2)
    grading, pids = GradingProcess(), []
    try:
        for n in range(3):
            code, _, _ = grading.check(pristine, tmp_path / f"{n}.json", 120)
            assert code == 1 and total(tmp_path / f"{n}.json") == 0.0
            pids.append(grading.child.pid)
    finally:
        grading.close()
    assert pids[0] == pids[1] != pids[2]


@given(st.characters(codec="utf-8") | st.characters(max_codepoint=0x1F))
def test_the_longest_output_of_any_character_fits_in_a_reply(character):
    """A reply carries the last OUTPUT_KEPT characters of what a check printed, however JSON escapes them."""
    reply = json.dumps({"code": 1, "output": character * graders.OUTPUT_KEPT}).encode()
    assert len(reply) <= graders.REPLY_CAP
