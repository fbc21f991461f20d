"""The same verdicts on a busy machine: every known mistake and correct variant graded alone and beside a CPU hog."""

import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest

from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

MUTANTS = Path(__file__).resolve().parents[1] / "mutants"
VARIANTS = sorted((MUTANTS / "wrong").glob("*.py")) + sorted((MUTANTS / "right").glob("*.py"))
HOG = "while True:\n    pass\n"


def verdict(variant: Path, scratch: Path) -> tuple:
    """A variant's exercise graded on the quick profile: its status, points and each check's status (in a pool process)."""
    exercise = variant.stem.split("__")[0]
    folder = scratch / variant.parent.name / variant.stem
    folder.mkdir(parents=True)
    for module in SOLUTIONS_DIR.glob("*.py"):
        shutil.copy(module, folder)
    shutil.copy(variant, folder / f"{exercise}.py")
    result = run_checks(folder, [exercise], profile="quick").exercises[0]
    return result.status, result.points, tuple((c.id, c.status) for c in result.checks)


def grade_all(scratch: Path) -> dict:
    """Every variant's verdict, two at a time (the machine's two cores, as the kit's own tests grade them)."""
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        return dict(
            zip(
                [f"{v.parent.name}/{v.stem}" for v in VARIANTS],
                pool.map(verdict, VARIANTS, [scratch] * len(VARIANTS)),
            )
        )


@pytest.mark.slow
def test_verdicts_are_the_same_while_two_processes_keep_every_core_busy(tmp_path):
    quiet = grade_all(tmp_path / "quiet")
    hogs = [
        subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(max(2, os.cpu_count() or 2))
    ]
    try:
        time.sleep(0.5)
        busy = grade_all(tmp_path / "busy")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    differ = {name: (quiet[name], busy[name]) for name in quiet if quiet[name] != busy[name]}
    assert differ == {}
    assert len(quiet) == len(VARIANTS) >= 38
