"""Where the kit's folders are, wherever the grader is run from."""

from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
KIT_ROOT = GRADER_DIR.parent
# public/ and, in the full kit, hidden/: one test_*.py per exercise
CHECKS_DIR = GRADER_DIR / "check" / "checks"
# where a student works: the full kit makes its stubs in grader/course/stubs.py, never from here
EXERCISES_DIR = KIT_ROOT / "exercises"
SOLUTIONS_DIR = KIT_ROOT / "solutions"  # the full kit's only: the student's kit has none
# The corpus: data/ beside grader/ in the repository; inside the package in the student's kit, so that
# a wheel (or any install that is not editable) carries it along.
DATA_DIR = GRADER_DIR / "data" if (GRADER_DIR / "data").is_dir() else KIT_ROOT / "data"
MODULES = ("scores", "masking", "softmax", "heads", "training")


def default_submission() -> Path:
    """The student's folder: ./exercises when run from a copy of the kit, else the kit's own."""
    here = Path.cwd() / "exercises"
    return here if (here / "scores.py").is_file() else EXERCISES_DIR
