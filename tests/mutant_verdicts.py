"""The known mistakes and correct variants (tests/mutants/), each graded on the quick profile with the reference around it.

Graded once a session, two at a time (the machine's two cores), for the checks' tests and the busy-machine one.
"""

import shutil
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

MUTANTS = Path(__file__).resolve().parent / "mutants"
WRONG = sorted((MUTANTS / "wrong").glob("*.py"))
RIGHT = sorted((MUTANTS / "right").glob("*.py"))


def exercise_of(mutant: Path) -> str:
    """The exercise a mutant's module belongs to: the part of its name before "__"."""
    return mutant.stem.split("__")[0]


def key(mutant: Path) -> str:
    """A mutant's name among the verdicts: its stem, "right/" before a correct variant's."""
    return mutant.stem if mutant in WRONG else "right/" + mutant.stem


def submission_with(folder: Path, *mutants: Path) -> Path:
    """A copy of the reference with each mutant in place of its module."""
    folder.mkdir(parents=True, exist_ok=True)
    for module in SOLUTIONS_DIR.glob("*.py"):
        shutil.copy(module, folder)
    for mutant in mutants:
        shutil.copy(mutant, folder / f"{exercise_of(mutant)}.py")
    return folder


def verdict_of(mutant: Path, scratch: Path) -> dict:
    """The quick-profile verdict of a mutant's own exercise, as JSON (run in a pool process)."""
    folder = submission_with(scratch / mutant.parent.name / mutant.stem, mutant)
    result = run_checks(folder, [exercise_of(mutant)], profile="quick").exercises[0]
    return result.to_json()


def graded(scratch: Path) -> dict[str, dict]:
    """Every mutant's verdict by key(), computed two at a time."""
    mutants = WRONG + RIGHT
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        return dict(zip(map(key, mutants), pool.map(verdict_of, mutants, [scratch] * len(mutants))))
