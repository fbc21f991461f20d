"""Finding the student's folder and making sure it holds the five modules."""

from pathlib import Path

from grader.paths import EXERCISES_DIR, MODULES, SOLUTIONS_DIR, default_submission
from grader.sandbox import intake
from grader.sandbox.errors import SubmissionError


def find_submission(submission: Path | None = None, solutions: bool = False) -> Path:
    """The folder to grade: the reference solutions, the given folder, or ./exercises."""
    if solutions and submission is not None:
        raise SubmissionError(
            "--submission DIR and --solutions name two different folders: give one of them."
        )
    folder = SOLUTIONS_DIR if solutions else Path(submission or default_submission()).expanduser()
    if not folder.exists():
        raise SubmissionError(
            f"{folder} does not exist: pass the folder that holds your five modules with --submission DIR."
        )
    if not folder.is_dir():
        raise SubmissionError(
            f"{folder} is a file, not a folder: pass the folder that holds your five modules."
        )
    missing = [f"{name}.py" for name in MODULES if not (folder / f"{name}.py").is_file()]
    if missing:
        raise SubmissionError(
            f"{folder} has no {', '.join(missing)}: the grader needs all five modules "
            f"({', '.join(name + '.py' for name in MODULES)}); {where_to_get(folder, missing)}"
        )
    if not solutions and folder.resolve() == SOLUTIONS_DIR.resolve():
        raise SubmissionError(
            f"{folder} is the kit's own reference folder: to check it, run grader check --solutions."
        )
    for name in MODULES:
        try:
            # a look, not a read (regular, within a module's size): the snapshot reads it once
            intake.check_module(folder, name)
        except intake.Refused as error:
            raise SubmissionError(f"In {folder}: {error}.") from None
    return folder.resolve()


def where_to_get(folder: Path, missing: list[str]) -> str:
    """Where a missing module's stub can be had again: the kit's exercises/ folder, unless that is the folder."""
    if folder.resolve() == EXERCISES_DIR.resolve() or not all(
        (EXERCISES_DIR / name).is_file() for name in missing
    ):
        return (
            f"get the missing stub again from the kit you were given (in a git clone of it: "
            f"git -C {folder} checkout -- {' '.join(missing)})."
        )
    return f"copy the missing stub from the kit's exercises/ folder ({EXERCISES_DIR})."
