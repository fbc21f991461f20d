"""The report a student reads after `grader check`: failures in words, a table of points, what next."""

from pathlib import Path

from grader.check.results import ExerciseResult, Report
from grader.exercises import BY_NAME
from grader.style import mark, paint, shown_command

ISOLATION = {
    "namespaces": "your code ran confined in namespaces of its own",
    "user": "your code ran as a user of its own",
    "none": "your code ran unconfined, as you",
}
STATUS_WORDS = {"passed": "passed", "failed": "failed", "not_started": "not started", "error": "error"}
COLOURS = {"passed": "green", "failed": "red", "error": "red", "not_started": "yellow"}


def points(value: float) -> str:
    """Points with one decimal, as the table shows them."""
    return f"{value:.1f}"


def submission_args(folder: Path, solutions: bool) -> tuple[str, ...]:
    """The options that name this submission again on the command line."""
    if solutions:
        return ("--solutions",)
    here = Path.cwd() / "exercises"
    return () if here.exists() and folder.resolve() == here.resolve() else ("--submission", str(folder))


def details(result: ExerciseResult) -> list[str]:
    """The lines that explain an exercise that did not pass."""
    title = BY_NAME[result.name].title
    lines = [f"{mark(result.status)} {paint(result.name, bold=True)}: {title}"]
    if result.status == "not_started":
        functions = BY_NAME[result.name].functions
        verb = "raises" if len(functions) == 1 else "raise"
        lines.append(f"    not started: {', '.join(functions)} still {verb} NotImplementedError.")
        return lines
    for check in result.checks:
        if check.status == "passed":
            continue
        word = STATUS_WORDS[check.status]
        lines.append(f"  {paint(check.id, fg=COLOURS[check.status])} ({word})")
        lines += [f"      {line}" for line in check.message.splitlines()]
    if result.note:
        lines.append(f"  Note: {result.note}")
    return lines


def table(report: Report) -> list[str]:
    """The summary table: one row per exercise and the total."""
    rows = [f"  {'exercise':<10}{'status':<13}{'checks':>8}{'points':>15}"]
    for result in report.exercises:
        passed = sum(check.status == "passed" for check in result.checks)
        status = paint(f"{STATUS_WORDS[result.status]:<13}", fg=COLOURS[result.status])
        score = f"{points(result.points)} / {points(result.max_points)}"
        rows.append(f"{mark(result.status)} {result.name:<10}{status}{f'{passed}/{len(result.checks)}':>8}{score:>15}")
    total = f"{points(report.points)} / {points(report.max_points)}"
    rows.append(paint(f"  {'total':<31}{total:>15}", bold=True))
    return rows


def next_step(report: Report, folder: Path, solutions: bool) -> list[str]:
    """What to do now, and how to replay the checks exactly."""
    where = submission_args(folder, solutions)
    todo = [result for result in report.exercises if result.status != "passed"]
    if not todo:
        if solutions:
            return ["The reference solutions pass every check that was run."]
        return [f"Every check that was run passes. Once all five do, run {shown_command('compare')}."]
    first = todo[0]
    name = first.name
    if first.grader_fault:
        return [
            f"The grader could not run the checks of {name}: that is not about your code, so there is nothing to fix in {name}.py.",
            f"Report the message above to your instructor; {shown_command('check', '--solutions')} shows whether the grader works on this machine.",
        ]
    if first.status == "not_started":
        step = f"Next: fill in {', '.join(BY_NAME[name].functions)} in {name}.py, then run {shown_command('check', name, *where)}."
    elif first.status == "error":
        step = f"Next: make {name}.py import and return in time (see the message above), then run {shown_command('check', name, *where)}."
    else:
        step = f"Next: fix {name} from its first message above, then run {shown_command('check', name, *where)}."
    return [
        step,
        f"Stuck? {shown_command('hint', name)} gives one hint at a time.",
        f"Replay: the checks are deterministic (Hypothesis seed {report.seed}); "
        f"{shown_command('check', name, *where)} reruns exactly the same examples.",
    ]


def render(report: Report, folder: Path, solutions: bool = False) -> str:
    """The whole report as text, styled for a terminal or plain for a pipe."""
    lines = [f"Checked {folder} (Hypothesis seed {report.seed}; {ISOLATION[report.isolation]}).", ""]
    for result in report.exercises:
        if result.status != "passed":
            lines += details(result) + [""]
        elif result.note:
            lines += [f"{mark('passed')} {result.name}: {result.note}", ""]
    lines += table(report) + [""] + next_step(report, folder, solutions)
    copied = [f"{e.name}.py" for e in report.exercises if e.same_as_reference]
    if copied:
        lines += ["", paint(f"For the instructor: {', '.join(copied)} {'is' if len(copied) == 1 else 'are'} byte for byte the kit's reference solution.", bold=True)]
    return "\n".join(lines)
