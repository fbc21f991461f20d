"""`grader try`: the student's own function in the foreground, beside what it should give."""

import shutil
import subprocess
import sys

import pytest

from grader.course.stubs import write_stubs
from grader.paths import SOLUTIONS_DIR


def reference_copy(tmp_path):
    folder = tmp_path / "reference"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def grader_try(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "grader", "try", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.slow
def test_the_reference_agrees_on_every_function_of_an_exercise(tmp_path):
    run = grader_try("training", "--submission", str(reference_copy(tmp_path)), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    for function in ("softmax_backward", "attention_head_backward", "sgd_step", "train"):
        assert f"{function} on a small example:" in run.stdout
    assert run.stdout.count("they agree") == 4


@pytest.mark.slow
def test_prints_show_a_stub_is_not_started_and_a_mistake_differs(tmp_path):
    folder = write_stubs(tmp_path / "work")
    assert (
        "not written yet" in grader_try("softmax", "--submission", str(folder), cwd=tmp_path).stdout
    )
    (folder / "scores.py").write_text(
        'def attention_scores(q, k):\n    print("looking at q", q.shape)\n    return q @ k.T\n'
    )
    run = grader_try("scores", "--submission", str(folder), cwd=tmp_path)
    assert (
        run.returncode == 1 and "looking at q (3, 2)" in run.stdout and "they differ" in run.stdout
    )


def test_a_function_of_another_exercise_is_a_usage_error(tmp_path):
    run = grader_try(
        "scores", "softmax", "--submission", str(reference_copy(tmp_path)), cwd=tmp_path
    )
    assert (
        run.returncode == 2
        and "scores has no function softmax: choose one of attention_scores" in run.stderr
    )
