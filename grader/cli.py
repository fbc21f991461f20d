"""The `grader` command line: Click code only; each command hands off to one function."""

import sys
from pathlib import Path

if sys.version_info < (3, 11):  # noqa: UP036 (runs on an older Python too, to say so) before any import that needs a newer Python
    print(
        f"Attention by Hand needs Python 3.11 or newer, and {sys.executable} is Python "
        f"{sys.version.split()[0]}: set the kit up with a newer python3, as the README's first line does.",
        file=sys.stderr,
    )
    sys.exit(2)
try:
    import click
except ModuleNotFoundError:
    VENV_GRADER = r".venv\Scripts\grader" if sys.platform == "win32" else ".venv/bin/grader"
    print(
        f"The kit is not installed for {sys.executable}: run the README's first line, "
        f"then use {VENV_GRADER} (or activate .venv and type grader).",
        file=sys.stderr,
    )
    sys.exit(2)

from grader import kit, stops
from grader.exercises import NAMES

STUDENT_KIT = kit.is_student_kit()  # the instructor's commands and --solutions are hidden there
EXERCISE = click.Choice(NAMES)
FILE = click.Path(path_type=Path)
ALL_OR_NOTHING = click.option(  # batch's, nbgrader's and gradescope's
    "--all-or-nothing",
    is_flag=True,
    help="An exercise earns its points only when every check passes.",
)
LATE_POLICY = click.option(  # nbgrader's and gradescope's; batch's also needs --due
    "--late-policy",
    default="",
    metavar="POLICY",
    help='Take points off late work, e.g. "10%/day,max 3 days".',
)
SUBMISSION = click.option(
    "--submission",
    type=FILE,
    default=None,
    help="A folder holding the five modules (default: ./exercises).",
)
SOLUTIONS = click.option(
    "--solutions", is_flag=True, hidden=STUDENT_KIT, help="Use the reference solutions instead."
)
JSON_FILE = click.option(
    "--json",
    "json_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the result as JSON.",
)
JUNIT_FILE = click.option(
    "--junit",
    "junit_file",
    type=FILE,
    default=None,
    help="Also write the verdicts as JUnit XML (pytest's format).",
)
# Gradescope's, for the hidden checks
VISIBILITY = click.Choice(["hidden", "after_due_date", "after_published"])


class Grader(click.Group):
    """The command group: Ctrl-C (or a kill) stops any command cleanly, on every OS, with exit status 130 (143)."""

    def invoke(self, ctx):
        try:
            with stops.as_ctrl_c():  # a kill or a closed terminal too
                return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(f"\nStopped ({stops.name()}): nothing of this run was saved.", err=True)
            ctx.exit(stops.status())


@click.group(cls=Grader, invoke_without_command=True)
@click.version_option(package_name=kit.DISTRIBUTION)
@click.option(
    "--submission",
    type=click.Path(path_type=Path),
    default=None,
    help="A folder holding the five modules (default: ./exercises), for the command that follows or, alone, for status.",
)
@click.pass_context
def main(ctx, submission):
    """Attention by Hand: build self-attention in numpy, checked as you go.

    Run with no command to see your progress. Start with:

        grader check scores
    """
    if ctx.invoked_subcommand is None:
        from grader.student.status import status

        sys.exit(status(submission=submission))
    if submission is not None:
        hand_on(ctx, submission)


def hand_on(ctx, submission: Path) -> None:
    """`grader --submission DIR COMMAND`: DIR becomes COMMAND's --submission, unless COMMAND names its own."""
    name = ctx.invoked_subcommand
    if not any(param.name == "submission" for param in main.get_command(ctx, name).params):
        takers = [
            n
            for n, c in main.commands.items()
            if any(p.name == "submission" for p in c.params) and not c.hidden
        ]
        raise click.UsageError(
            f"--submission goes with {', '.join(sorted(takers))}; `grader {name}` does not take it."
        )
    ctx.default_map = {**(ctx.default_map or {}), name: {"submission": submission}}


@main.command()
@click.argument("exercises", nargs=-1, type=EXERCISE)
@SUBMISSION
@SOLUTIONS
@JSON_FILE
@JUNIT_FILE
@click.option(
    "--output", is_flag=True, help="Also show everything your functions printed, check by check."
)
def check(exercises, submission, solutions, json_file, junit_file, output):
    """Run the checks on your exercises (all five by default): public and hidden in the full kit, public in the student's.

    Exit status 0 when every selected exercise passes, 1 when any does not, 2 for a usage
    error, a submission that cannot be read or a result file that cannot be written.

    A failed check ends with what your functions printed on its example;
    --output shows everything they printed, check by check.

    Example: grader check softmax heads --json report.json --junit report.xml
    """
    from grader.check.command import check as run

    no_reference(solutions)
    sys.exit(run(exercises, submission, solutions, json_file, junit_file, output))


@main.command()
@SUBMISSION
@SOLUTIONS
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed for the corpus order and the weights.",
)
@JSON_FILE
@click.option(
    "--plot",
    "plot_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Also draw the figures to a PNG.",
)
@click.option(
    "--no-mask",
    is_flag=True,
    help="Train the attention model without the causal mask, to see why it matters.",
)
def compare(submission, solutions, seed, json_file, plot_file, no_mask):
    """Once all five exercises pass: train the 8-character MLP and your attention model, side by side.

    Example: grader compare --seed 1
    """
    from grader.compare.command import compare as run

    no_reference(solutions)
    sys.exit(
        run(
            submission=submission,
            solutions=solutions,
            seed=seed,
            json_file=json_file,
            plot_file=plot_file,
            no_mask=no_mask,
        )
    )


@main.command()
@SUBMISSION
def status(submission):
    """Your progress: where each exercise stands, and what to do next.

    Example: grader status
    """
    from grader.student.status import status as run

    sys.exit(run(submission=submission))


@main.command()
@click.argument("exercise", required=False, type=EXERCISE, metavar="[EXERCISE]")
@SUBMISSION
def watch(exercise, submission):
    """Recheck every time you save; Ctrl-C to stop.

    Checks the exercise whose file you saved (or EXERCISE: scores, masking,
    softmax, heads or training) first, then any other whose files changed.

    Example: grader watch softmax
    """
    from grader.student.watch import watch as run

    sys.exit(run(exercise, submission=submission))


@main.command(name="try")
@click.argument("exercise", type=EXERCISE, metavar="EXERCISE")
@click.argument("function", required=False)
@SUBMISSION
@click.option(
    "--input",
    "given",
    multiple=True,
    metavar="NAME=EXPR",
    help="Try it on your own input: an argument by name, as a Python expression with numpy as np (repeatable).",
)
def try_(exercise, function, submission, given):
    """Run your function here, in the foreground, beside what it should give.

    Its input is the one the check it last failed was run on, else a small
    worked example, or yours with --input. print() shows and breakpoint()
    stops in this terminal. FUNCTION defaults to each function of the
    exercise in turn.

    Example: grader try softmax --input 'x=np.array([[1.0, 2.0, -np.inf]])'
    """
    from grader.student.trying import try_function

    sys.exit(try_function(exercise, function, submission=submission, given=given))


@main.command()
@click.argument("exercise", type=EXERCISE, metavar="EXERCISE")
@click.argument("function", required=False)
@SUBMISSION
def hint(exercise, function, submission):
    """The next hint for a function of an exercise: one more each time you ask.

    EXERCISE is one of scores, masking, softmax, heads, training. Each function has
    a ladder of its own; FUNCTION defaults to the first function of the exercise
    that your last check did not pass.

    Example: grader hint training sgd_step
    """
    from grader.student.hints import hint as run

    sys.exit(run(exercise, function, submission=submission))


def no_reference(solutions: bool) -> None:
    """In the student's kit, --solutions is a usage error that says why."""
    if solutions and STUDENT_KIT:
        click.echo(
            "This is the student's kit: it has no reference solutions, so --solutions has nothing to use.",
            err=True,
        )
        sys.exit(2)


def instructor_only(command: str) -> None:
    """In the student's kit, an instructor's command says where it lives instead of failing to import."""
    if STUDENT_KIT:
        click.echo(
            f"This is the student's kit (written by grader release): `grader {command}` is an instructor's command. "
            "Run it in the course's full kit, the repository with the reference and the hidden checks.",
            err=True,
        )
        sys.exit(2)


@main.command(hidden=STUDENT_KIT)
@click.argument("course_dir", type=click.Path(path_type=Path))
@click.option(
    "--assignment",
    default="attention-by-hand",
    show_default=True,
    help="The nbgrader assignment name.",
)
@click.option("--force", is_flag=True, help="Replace the source assignment if it exists.")
@click.option(
    "--course-id",
    help="nbgrader's course id; on a JupyterHub, the hub's course. [default: the folder's name]",
)
@click.option(
    "--exchange",
    help="nbgrader's exchange folder, shared with the students. [default: COURSE_DIR/exchange]",
)
@ALL_OR_NOTHING
@LATE_POLICY
def nbgrader(course_dir, assignment, force, course_id, exchange, all_or_nothing, late_policy):
    """Write the nbgrader source assignment into an nbgrader course folder.

    Example: grader nbgrader ~/course --assignment attention-by-hand --course-id ml101
    """
    instructor_only("nbgrader")
    from grader.course.nbgrader.assignment import export

    sys.exit(
        export(course_dir, assignment, force, course_id, exchange, all_or_nothing, late_policy)
    )


@main.command(hidden=STUDENT_KIT)
@click.argument("dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--jobs",
    type=int,
    default=None,
    help="How many submissions to grade at once.  [default: the CPUs this process may use: its cores, fewer under a container's CPU quota]",
)
@click.option(
    "--csv",
    "csv_file",
    type=click.Path(path_type=Path),
    required=True,
    help="Where to write one row per submission.",
)
@click.option(
    "--timeout",
    type=float,
    default=300.0,
    show_default=True,
    help="Seconds one submission may take in all.",
)
@click.option(
    "--allow-unisolated",
    is_flag=True,
    help="Grade even where the students' code cannot be confined (not for real grades).",
)
@ALL_OR_NOTHING
@click.option(
    "--force", is_flag=True, help="Regrade every folder, replacing the rows already in the CSV."
)
@click.option(
    "--regrade",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FOLDER",
    help="Regrade this folder although its row is up to date (repeatable).",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Grade only the I-th of N shares of the uploads (the same on every machine); see grader merge.",
)
@click.option(
    "--feedback",
    type=FILE,
    metavar="DIR",
    help="Also write each student's report, as they would see it, into DIR.",
)
@click.option(
    "--late-policy",
    default="",
    metavar="POLICY",
    help='Take points off late work, e.g. "10%/day,max 3 days" (needs --due).',
)
@click.option(
    "--due",
    default="",
    metavar="WHEN",
    help="The due date for --late-policy, e.g. 2025-05-01T23:59+02:00.",
)
def batch(
    dirs,
    jobs,
    csv_file,
    timeout,
    allow_unisolated,
    force,
    regrade,
    all_or_nothing,
    shard,
    feedback,
    late_policy,
    due,
):
    """Grade many uploads in parallel, one CSV row per student; reruns resume and regrade changed files.

    Each DIR is one student's upload, named by its own name: a folder holding the five modules anywhere (an LMS
    download's, nbgrader's submitted/STUDENT/ASSIGNMENT) or a zip. Refuses where students' code cannot be confined.

    Example: grader batch submissions/* --jobs 2 --csv grades.csv
    """
    instructor_only("batch")
    from grader.check.results import score_all_or_nothing
    from grader.course.answering import Asked
    from grader.course.batch import batch as run
    from grader.course.shards import ShardError, parse

    try:
        share = parse(shard) if shard is not None else None
    except ShardError as error:
        raise click.BadParameter(str(error), param_hint="--shard") from None
    if all_or_nothing:
        score_all_or_nothing()  # every `grader check` the batch starts inherits it

    asked = Asked(feedback, late_policy, due)
    sys.exit(
        run(
            dirs,
            jobs=jobs,
            csv_file=csv_file,
            timeout=timeout,
            allow_unisolated=allow_unisolated,
            force=force,
            regrade=regrade,
            shard=share,
            asked=asked,
        )
    )


@main.command(hidden=STUDENT_KIT)
@click.argument("csv_files", nargs=-1, required=True, type=FILE, metavar="CSV...")
@click.option("--csv", "out", type=FILE, required=True, help="Where to write the merged CSV.")
def merge(csv_files, out):
    """Join the CSVs of grader batch --shard runs into one, as one run over the whole class would write it.

    A student in two CSVs with the same files is one row; with different files, nothing is written (exit status 2).

    Example: grader merge shard-1.csv shard-2.csv --csv grades.csv
    """
    instructor_only("merge")
    from grader.course.merge import merge as run

    sys.exit(run(csv_files, out))


@main.command(hidden=STUDENT_KIT)
@click.argument("out_zip", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Replace OUT_ZIP if it exists.")
@click.option(
    "--hidden",
    type=VISIBILITY,
    default="after_published",
    show_default=True,
    help="When students see failed hidden checks.",
)
@ALL_OR_NOTHING
@LATE_POLICY
def gradescope(out_zip, force, hidden, all_or_nothing, late_policy):
    """Write a Gradescope autograder zip: setup.sh, run_autograder and the full kit.

    Upload it as the "Zip file upload" autograder of a Gradescope programming assignment.

    Example: grader gradescope autograder.zip
    """
    instructor_only("gradescope")
    from grader.course.gradescope import export

    sys.exit(
        export(
            out_zip,
            force=force,
            hidden=hidden,
            all_or_nothing=all_or_nothing,
            late_policy=late_policy,
        )
    )


@main.command(hidden=STUDENT_KIT)
@click.argument("source", type=FILE, metavar="CSV|GRADEBOOK")
@click.option(
    "--html", "html_file", type=FILE, help="Also write the report as one self-contained HTML page."
)
@click.option(
    "--similarity",
    "similar_file",
    type=FILE,
    help="Also list near-copies, and write their shared lines as HTML.",
)
@click.option(
    "--pairs",
    "pairs_file",
    type=FILE,
    help="Also write the near-copies as a CSV, ranked, the two ids first.",
)
@click.option(
    "--min-tokens",
    "least",
    type=click.IntRange(1),
    help="The least code a pair must share to be listed.  [default: 300]",
)
@click.option(
    "--top", type=click.IntRange(1), help="The most pairs listed, closest first.  [default: 50]"
)
@click.option(
    "--anonymise",
    "key_file",
    type=FILE,
    metavar="KEY",
    help="Name students by pseudonyms made with the key in KEY (made if missing).",
)
@click.option(
    "--assignment",
    default="attention-by-hand",
    show_default=True,
    help="The assignment, in an nbgrader gradebook.",
)
def report(source, html_file, similar_file, pairs_file, least, top, key_file, assignment):
    """The class at a glance, from a `grader batch` CSV or nbgrader's gradebook.db; near-copies.

    Example: grader report grades.csv --html class.html --similarity similarity.html --pairs pairs.csv
    """
    instructor_only("report")
    from grader.course.class_report import class_report

    sys.exit(
        class_report(source, html_file, similar_file, pairs_file, least, top, key_file, assignment)
    )


@main.command(hidden=STUDENT_KIT)
@click.argument("out_dir", type=click.Path(path_type=Path))
@click.option(
    "--force",
    is_flag=True,
    help="Write into OUT_DIR although it is not empty (the release's own files there are replaced).",
)
def release(out_dir, force):
    """Write the student's kit for a course: the stubs, the grader with its public checks only, the corpus,
    a README and a pyproject.toml; no reference code, no hidden check.

    pip install of the folder (or of a wheel built from it, for a JupyterHub image) is all a student needs.

    Example: grader release ../student-kit
    """
    instructor_only("release")
    from grader.course.release import release as run

    sys.exit(run(out_dir, force=force))


@main.command(name="export", hidden=STUDENT_KIT)
@click.argument("source", type=FILE, metavar="CSV|GRADEBOOK")
@click.option(
    "--to",
    "to",
    type=click.Choice(["canvas", "moodle", "csv"]),
    default="csv",
    show_default=True,
    help="The LMS's columns.",
)
@click.option("--out", type=FILE, required=True, help="Where to write the grades.")
@click.option(
    "--column",
    default="Attention by Hand",
    show_default=True,
    help="Canvas: the assignment's column, as Canvas's export names it.",
)
@click.option(
    "--exercises",
    is_flag=True,
    help="Canvas: each exercise's points as a column (an assignment) of its own too.",
)
@click.option(
    "--assignment",
    default="attention-by-hand",
    show_default=True,
    help="The assignment, in an nbgrader gradebook.",
)
def export_grades(source, to, out, column, exercises, assignment):
    """The grades in the columns Canvas's gradebook or Moodle's grading worksheet imports, from a batch CSV or nbgrader's gradebook.db.

    One row per student, with the LMS's id and name; overrides applied. Example: grader export grades.csv --to moodle --out moodle.csv
    """
    instructor_only("export")
    from grader.course.lms_export import Columns, export

    sys.exit(
        export(source, to=to, out=out, assignment=assignment, columns=Columns(column, exercises))
    )


@main.command(hidden=STUDENT_KIT)
@click.argument("grades", type=FILE, metavar="CSV|GRADEBOOK")
@click.argument("student")
@click.argument("exercise", type=EXERCISE)
@click.argument("points", type=float)
@click.option("--why", required=True, help="Why, for the log and the student's feedback.")
@click.option("--by", default="", help="Who decided it.  [default: your user name]")
@click.option(
    "--assignment",
    default="attention-by-hand",
    show_default=True,
    help="The assignment, in an nbgrader gradebook.",
)
def override(grades, student, exercise, points, why, by, assignment):
    """Set one student's points for an exercise by hand, recorded with who, when and why beside the grades.

    STUDENT is the row's student cell, the LMS's id or the name. Every rerun of grader batch and every
    grader export applies it again. Example: grader override grades.csv 1001 heads 18 --why "regraded by hand"

    A name that starts with "-" goes after "--": grader override --why "..." -- grades.csv -0 heads 18
    """
    instructor_only("override")
    from grader.course.overrides import Decision
    from grader.course.overrides import override as run

    sys.exit(run(grades, student, exercise, points, Decision(why, by, assignment)))
