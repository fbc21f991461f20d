"""`grader nbgrader`: the kit as an nbgrader source assignment, with the course settings and the students' side it needs."""

import re
from pathlib import Path
from typing import NamedTuple

import click

from grader.course import late
from grader.course.nbgrader import notebook
from grader.course.stubs import write_stubs
from grader.paths import MODULES

CELL_TIMEOUT = 60  # seconds a notebook cell may run at autograde: try cells stop at 5 s, graded cells are not run
NOTEBOOK_TIMEOUT = 300  # seconds for all of a notebook's cells at autograde
ASSIGNMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
NBGRADER_EXCHANGE = "/usr/local/share/nbgrader/exchange"  # nbgrader's default Exchange.root
FOR_STUDENTS = (
    "for-students"  # in the course folder: the students' nbgrader settings and the student's kit
)

CONFIG = """\
# nbgrader settings for the course, written by `grader nbgrader`.
c = get_config()  # noqa: F821 (nbgrader provides get_config)

"""

COURSE = """\
# The course and its exchange, for nbgrader release_assignment, fetch_assignment, submit and collect.
# On a JupyterHub, name the hub's shared exchange here and in for-students/nbgrader_config.py.
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
"""

AUTOGRADE = """\
# Trusted autograde: each submission's exercises/ is graded as collected, with the hidden checks and the
# student's code confined, before any cell runs (GradeModules); the notebook then runs for the feedback in
# a confined kernel, without its graded cells (RunNotebook), whose report and points the kit writes (WriteGrades).
c.Autograde.autograde_preprocessors = [
    "grader.course.nbgrader.autograde.GradeModules",
    "grader.course.nbgrader.execute.RunNotebook",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "grader.course.nbgrader.autograde.SanitizeStudentHTML",
    "grader.course.nbgrader.autograde.WriteGrades",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# The student's markdown cells and HTML outputs are cleaned once by SanitizeStudentHTML above (the kit's outlet, nh3:
# no script, handler, image or javascript: link) and stored so that nothing renders them anew; script outputs are
# dropped. So neither the feedback nor the formgrader runs or fetches anything of the student's. A notebook that is
# not valid JSON, past 8 MiB or 1,000 cells, or whose graded cells were changed, is replaced by the kit's with a
# note: its modules are graded.
c.Autograde.exporter_class = "grader.course.nbgrader.autograde.KitNotebookExporter"
# A cell that runs longer than this, or kills its kernel, ends the notebook's run there (not the grading).
c.RunNotebook.timeout = {timeout}
c.RunNotebook.notebook_timeout = {notebook_timeout}
# zip_collect: the download unpacked by the kit (each upload within bounds, no link, zips in it unpacked), and a
# student's files wherever their own upload put them (a zip of their folder too), .py files included.
c.ZipCollectApp.extractor_plugin = "grader.course.nbgrader.collect.KitExtractor"
c.ZipCollectApp.collector_plugin = "grader.course.nbgrader.collect.KitCollector"
c.FileNameCollectorPlugin.valid_ext = [".ipynb", ".py"]
"""

SCORING = """\
# Points per exercise: False gives points times the share of its checks passed (rounded down to a half
# point); True gives an exercise its points only when every check passes.
c.GradeModules.all_or_nothing = {all_or_nothing}
"""

LATE = """\
# Late work loses points by the kit's policy, from nbgrader's submission times and the assignment's due date
# (nbgrader db assignment add NAME --duedate ...): {policy}
c.AssignLatePenalties.plugin_class = "grader.course.nbgrader.late.KitLatePenalty"
c.KitLatePenalty.policy = {policy!r}
"""

ASSIGNMENT = """\
# {assignment}: the student's work is in these modules: at autograde keep them, instead of copying the
# released stubs over them as nbgrader does with every other file of the assignment.
c.Autograde.exclude_overwriting.update({{{assignment!r}: {modules!r}}})
"""

STUDENTS = """\
# nbgrader settings for the students of the course, written by `grader nbgrader`: on a JupyterHub, put this
# file in the students' image as /etc/jupyter/nbgrader_config.py (for one student: ~/.jupyter/), so that
# fetch_assignment, submit and the Assignments tab find the course.
c = get_config()  # noqa: F821 (nbgrader provides get_config)
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
"""


def export(
    course_dir: Path,
    assignment: str = "attention-by-hand",
    force: bool = False,
    course_id: str | None = None,
    exchange: str | None = None,
    all_or_nothing: bool = False,
    late_policy: str = "",
) -> int:
    """Write COURSE_DIR/source/ASSIGNMENT/, the course's nbgrader_config.py (or the lines to add) and for-students/.

    course_id and exchange default to the folder's name and COURSE_DIR/exchange; on a JupyterHub give the hub's.
    late_policy ("10%/day,max 3 days", grader/course/late.py): off when "".
    """
    if not ASSIGNMENT_NAME.fullmatch(assignment):
        click.echo(
            f"Cannot use {assignment!r} as an assignment name: use letters, digits, '-' and '_'.",
            err=True,
        )
        return 2
    if course_id is not None and not ASSIGNMENT_NAME.fullmatch(course_id):
        click.echo(
            f"Cannot use {course_id!r} as a course id: use letters, digits, '-' and '_', as the hub's course has.",
            err=True,
        )
        return 2
    if exchange is not None and not Path(exchange).is_absolute():
        click.echo(
            f"--exchange {exchange}: give the exchange as an absolute path (nbgrader's default is {NBGRADER_EXCHANGE}).",
            err=True,
        )
        return 2
    if late_policy:
        try:
            late.parse(late_policy)
        except late.PolicyError as error:
            click.echo(f"--late-policy: {error}.", err=True)
            return 2
    if course_dir.exists() and not course_dir.is_dir():
        click.echo(
            f"{course_dir} is a file, not a course folder: name a folder (it may be new or empty).",
            err=True,
        )
        return 2
    target = course_dir / "source" / assignment
    if target.exists() and any(target.iterdir()) and not force:
        click.echo(f"{target} already exists; to replace it, run again with --force.", err=True)
        return 1
    write_assignment(target, assignment)
    click.echo(f"Wrote the source assignment {target}/ ({assignment}.ipynb and exercises/).")
    chosen = Course(course_id, exchange, all_or_nothing, late_policy)
    course_id, exchange = write_settings(course_dir, assignment, chosen)
    write_students_side(course_dir / FOR_STUDENTS, course_id, exchange)
    click.echo(f"Next, in {course_dir}: nbgrader generate_assignment {assignment}")
    return 0


def write_assignment(target: Path, assignment: str) -> None:
    """The stub modules in exercises/ and the notebook."""
    # made from the reference, whatever the kit's exercises/ holds
    write_stubs(target / "exercises")
    (target / f"{assignment}.ipynb").write_text(notebook.dumps(assignment), encoding="utf-8")


class Course(NamedTuple):
    """What the instructor chose for the course on the command line; None for the defaults."""

    course_id: str | None = None
    exchange: str | None = None
    all_or_nothing: bool = False
    late_policy: str = ""


DEFAULT = Course()


def defaults(course_dir: Path, chosen: Course = DEFAULT) -> tuple[str, str]:
    """The course id (the folder's name) and the exchange (a folder in the course) `grader nbgrader` writes, unless chosen."""
    root = course_dir.resolve()
    course_id = re.sub(r"[^A-Za-z0-9_-]+", "-", root.name).strip("-") or "course"
    return chosen.course_id or course_id, chosen.exchange or str(root / "exchange")


def course_settings(course_dir: Path, chosen: Course = DEFAULT) -> list[str]:
    """The course-wide blocks of settings: the course and its exchange, then the kit's autograde."""
    course_id, exchange = defaults(course_dir, chosen)
    scoring = SCORING.format(all_or_nothing=chosen.all_or_nothing) + (
        LATE.format(policy=chosen.late_policy) if chosen.late_policy else ""
    )
    return [
        COURSE.format(course_id=course_id, exchange=exchange),
        AUTOGRADE.format(timeout=CELL_TIMEOUT, notebook_timeout=NOTEBOOK_TIMEOUT) + scoring,
    ]


def settings(assignment: str) -> str:
    """The lines of nbgrader_config.py one assignment needs."""
    return ASSIGNMENT.format(
        assignment=assignment, modules=[f"exercises/{name}.py" for name in MODULES]
    )


def write_settings(course_dir: Path, assignment: str, chosen: Course = DEFAULT) -> tuple[str, str]:
    """Write nbgrader_config.py, or, when the course has one, say which lines to add; the course id and exchange."""
    config = course_dir / "nbgrader_config.py"
    if not config.exists():
        course_dir.mkdir(parents=True, exist_ok=True)
        config.write_text(
            CONFIG + "\n".join(course_settings(course_dir, chosen) + [settings(assignment)]),
            encoding="utf-8",
        )
        click.echo(f"Wrote {config}.")
    else:
        missing = missing_lines(config.read_text(encoding="utf-8"), course_dir, assignment, chosen)
        if missing:
            click.echo(
                f"{config} exists and was left as it is. Add these lines to it (keep your own course id, "
                "exchange and longer timeouts if it has them):\n"
            )
            click.echo("\n".join(missing))
        else:
            click.echo(f"{config} already has the settings {assignment} needs.")
    course_id, exchange = configured(course_dir)
    if exchange == defaults(course_dir, chosen)[1] and not Path(exchange).exists():
        Path(exchange).mkdir(parents=True)
        # nbgrader's exchange: writable by everyone, as nbgrader requires
        Path(exchange).chmod(0o1777)
    return course_id, exchange


def missing_lines(
    text: str, course_dir: Path, assignment: str, chosen: Course = DEFAULT
) -> list[str]:
    """The blocks of settings that an existing config lacks, each judged by the line that matters."""
    blocks = course_settings(course_dir, chosen) + [settings(assignment)]
    # the block's newest line
    needles = [
        "CourseDirectory.course_id",
        "grader.course.nbgrader.collect.KitExtractor",
        f"{{{assignment!r}:",
    ]
    return [block for block, needle in zip(blocks, needles) if needle not in text]


def configured(course_dir: Path) -> tuple[str, str]:
    """The course id and exchange nbgrader reads from the course's config: ours, or the course's own."""
    course_id, exchange = defaults(course_dir)
    try:
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    except (
        Exception
    ):  # no nbgrader here, or a config it could not load: ours, and nbgrader will say what is wrong
        return course_id, exchange
    if (
        "course_id" in config.CourseDirectory
    ):  # the course names its own: then nbgrader's exchange, unless it names one
        course_id, exchange = config.CourseDirectory.course_id, NBGRADER_EXCHANGE
    return course_id, config.Exchange.get("root", exchange)


def write_students_side(folder: Path, course_id: str, exchange: str) -> None:
    """for-students/: the students' nbgrader_config.py and the student's kit."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(
        STUDENTS.format(course_id=course_id, exchange=exchange), encoding="utf-8"
    )
    click.echo(
        f"Wrote {folder / 'nbgrader_config.py'} for the students' Jupyter (course {course_id}, exchange {exchange})."
    )
    click.echo(write_student_kit(folder / "kit"))


def write_student_kit(target: Path) -> str:
    """The student's kit into target, by `grader release`; what was done, in one sentence."""
    from grader.course.release import release

    if release(target, force=True) != 0:
        return f"The student's kit could not be written to {target} (see above); run `grader release {target}` to retry."
    return f"Wrote the student's kit {target}/: install it in the students' environment."
