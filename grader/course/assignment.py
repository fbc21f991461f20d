"""`grader nbgrader`: the kit as an nbgrader source assignment, with the course settings it needs."""

import re
import shutil
from pathlib import Path

import click

from grader.course import cells as nbgrader_cell
from grader.course import notebook
from grader.paths import EXERCISES_DIR, MODULES

CELL_TIMEOUT = nbgrader_cell.LIMIT + 60  # seconds; above the test cell's own limit on the checks
ASSIGNMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")

SETTINGS = """\
# The student's work is in these modules: at autograde keep them, instead of copying the
# released stubs over them as nbgrader does with every other file of the assignment.
c.Autograde.exclude_overwriting.update({{{assignment!r}: {modules!r}}})
# A graded cell stops the kit's checks after {limit} s; nbgrader must wait a little longer.
c.ExecutePreprocessor.timeout = {timeout}
"""

CONFIG = """\
# nbgrader settings for the course, written by `grader nbgrader`.
c = get_config()  # noqa: F821 (nbgrader provides get_config)

"""


def export(course_dir: Path, assignment: str = "attention-by-hand", force: bool = False) -> int:
    """Write COURSE_DIR/source/ASSIGNMENT/ and, when the course has none, COURSE_DIR/nbgrader_config.py."""
    if not ASSIGNMENT_NAME.fullmatch(assignment):
        click.echo(f"Cannot use {assignment!r} as an assignment name: use letters, digits, '-' and '_'.", err=True)
        return 2
    if course_dir.exists() and not course_dir.is_dir():
        click.echo(f"{course_dir} is a file, not a course folder: name a folder (it may be new or empty).", err=True)
        return 2
    target = course_dir / "source" / assignment
    if target.exists() and any(target.iterdir()) and not force:
        click.echo(f"{target} already exists; to replace it, run again with --force.", err=True)
        return 1
    write_assignment(target, assignment)
    click.echo(f"Wrote the source assignment {target}/ ({assignment}.ipynb and exercises/).")
    write_settings(course_dir, assignment)
    click.echo(f"Next, in {course_dir}: nbgrader generate_assignment {assignment}")
    return 0


def write_assignment(target: Path, assignment: str) -> None:
    """The stub modules in exercises/ and the notebook."""
    stubs = target / "exercises"
    stubs.mkdir(parents=True, exist_ok=True)
    for name in ("__init__",) + MODULES:
        shutil.copyfile(EXERCISES_DIR / f"{name}.py", stubs / f"{name}.py")
    (target / f"{assignment}.ipynb").write_text(notebook.dumps(assignment), encoding="utf-8")


def settings(assignment: str) -> str:
    """The lines of nbgrader_config.py the assignment needs."""
    modules = [f"exercises/{name}.py" for name in MODULES]
    return SETTINGS.format(assignment=assignment, modules=modules, limit=nbgrader_cell.LIMIT, timeout=CELL_TIMEOUT)


def write_settings(course_dir: Path, assignment: str) -> None:
    """Write nbgrader_config.py, or, when the course has one, say what to add to it."""
    config = course_dir / "nbgrader_config.py"
    if config.exists() and settings(assignment) in config.read_text(encoding="utf-8"):
        click.echo(f"{config} already has the settings {assignment} needs.")
        return
    if config.exists():
        click.echo(f"{config} exists and was left as it is. Add these lines to it (keep a larger timeout if it has one):\n")
        click.echo(settings(assignment))
        return
    config.write_text(CONFIG + settings(assignment), encoding="utf-8")
    click.echo(f"Wrote {config}.")
