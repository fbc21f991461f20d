"""`grader status`: the five exercises in lesson order, the points, and the next step."""

from pathlib import Path

import click

from grader import kit
from grader.check.report import public_line, submission_args
from grader.check.report import shown_folder as shown
from grader.check.state import checked_report
from grader.exercises import BY_NAME, EXERCISES, NAMES
from grader.sandbox.isolation import choose_soon
from grader.student.welcome import first_run, show_welcome
from grader.style import mark, paint, shown_command

WORDS = {
    "passed": "passed",
    "failed": "failing",
    "error": "cannot run",
    "not_started": "not started",
}


def resolve(submission: Path | None, doing: str = "show your progress") -> Path | None:
    """The student's folder, or None after telling the student what is wrong with it."""
    from grader.sandbox.submission import SubmissionError, find_submission

    try:
        return find_submission(submission, False)
    except SubmissionError as error:
        click.echo(f"Cannot {doing}: {error}", err=True)
        return None


def unknown_function(exercise: str, function: str | None) -> bool:
    """True, after saying which functions there are, when the exercise has no function of this name."""
    functions = BY_NAME[exercise].functions
    if function is not None and function not in functions:
        click.echo(
            f"{exercise} has no function {function}: choose one of {', '.join(functions)}.",
            err=True,
        )
        return True
    return False


def status(submission: Path | None = None) -> int:
    """Print the student's progress; 0 once shown, 2 when the folder cannot be read."""
    folder = resolve(submission)
    if folder is None:
        return 2
    if first_run(folder):
        show_welcome()
    report = checked_report(folder, before=checking)
    click.echo(table(report, folder))
    click.echo("\n" + next_step(report, folder))
    return 0


def checking(missing: list[str]) -> None:
    """Say which exercises are checked now, having no verdict on their files yet."""
    which = "your five exercises" if len(missing) == len(NAMES) else ", ".join(missing)
    click.echo(paint(f"checking {which}…", dim=True))
    choose_soon()  # the confinement's probe runs while the checks are imported


def points(value: float) -> str:
    """Points without a needless .0."""
    return f"{value:g}"


def table(report, folder: Path) -> str:
    """The progress table: a line per exercise, the total and the state of the comparison."""
    by_name = {e.name: e for e in report.exercises}
    lines = [paint(f"Your attention, by hand ({shown(folder)})", bold=True)]
    width = max(len(e.title) for e in EXERCISES)
    for number, exercise in enumerate(EXERCISES, 1):
        result = by_name.get(exercise.name)
        state = result.status if result else "not_started"
        shown_score = score(exercise, result)
        lines.append(
            f"  {mark(state)} {number}. {exercise.name:<9} {exercise.title:<{width}}  {shown_score:>9}  {WORDS[state]}"
        )
    passed = sum(e.status == "passed" for e in report.exercises)
    if kit.is_student_kit():
        lines.append(f"  {public_line(report)}")
    else:
        lines.append(
            f"  {points(report.points)} of {points(sum(e.points for e in EXERCISES))} points, {passed} of 5 passed"
        )
    lines.append("")
    lines.append(unlock_line(report, folder))
    return "\n".join(lines)


def score(exercise, result) -> str:
    """An exercise's points, or in the student's kit its public checks passed (a grade needs the hidden ones too)."""
    if kit.is_student_kit():
        return "{}/{} public".format(*result.counts(True)) if result else "public"
    return f"{points(result.points if result else 0.0)}/{points(exercise.points)}"


def unlock_line(report, folder: Path) -> str:
    """Whether the comparison is unlocked."""
    if all_passed(report):
        return paint("The comparison is unlocked.", fg="green", bold=True)
    return f"The comparison ({shown_command('compare', *submission_args(folder, False))}) unlocks when all five pass."


def all_passed(report) -> bool:
    """True when every one of the five exercises passed."""
    passed = {e.name for e in report.exercises if e.status == "passed"}
    return passed == set(BY_NAME)


def next_step(report, folder: Path, watching: bool = False) -> str:
    """What to do next, about the first exercise in lesson order that has not passed."""
    by_name = {e.name: e for e in report.exercises}
    for exercise in EXERCISES:
        result = by_name.get(exercise.name)
        if result is None or result.status != "passed":
            return step(exercise, result, folder, watching)
    return (
        f"Next: run {shown_command('compare', *submission_args(folder, False))}: it trains the 8-character MLP and\n"
        "an attention model built from your own functions, and shows them side by side."
    )


def step(exercise, result, folder: Path, watching: bool = False) -> str:
    """The next step for one exercise that has not passed."""
    file, where = f"{shown(folder)}{exercise.name}.py", submission_args(folder, False)
    names = ", ".join(f"{f}()" for f in exercise.functions)
    if result is None or result.status == "not_started":
        then = f",\nthen run {shown_command('watch', *where)}: it rechecks your work every time you save."
        return f"Next: fill in {names} in {file}{' and save.' if watching else then}"
    if result.grader_fault:
        return (
            f"Next: the grader could not check {exercise.name}, which is not about your code.\n"
            f"{shown_command('check', exercise.name, *where)} shows the message to report to your instructor."
        )
    reason = first_problem(result)
    verb = "fails" if result.status == "failed" else "cannot be run"
    lines = [f"Next: {exercise.name} {verb}: {reason}"]
    fix = result.cause or exercise.name  # an earlier exercise at fault is the one to fix
    lines.append(
        f"Fix it in {shown(folder)}{fix}.py: {shown_command('check', fix, *where)} shows the details,\n"
        f"{shown_command('hint', fix, *where)} gives a hint."
    )
    return "\n".join(lines)


def first_problem(result) -> str:
    """The root cause, or the first line of the first check that did not pass."""
    if result.note:
        return result.note
    for check in result.checks:
        if check.status != "passed" and check.message.strip():
            lines = [line.strip() for line in check.message.strip().splitlines()]
            # a lead-in says nothing alone
            return (
                f"{lines[0]} {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else lines[0]
            )
    return f"{sum(c.status != 'passed' for c in result.checks)} of {len(result.checks)} checks did not pass."
