"""The report after `grader check`: failures in words, a table, what next; it says which checks ran.

In the student's kit only the public checks run, and the report says so on every run, never that
everything passed ("public checks: 12 of 12 pass · the hidden checks run when your work is graded");
the full kit's report tells public from hidden, and names an exercise whose public checks all pass
while a hidden one fails, since the student's own kit shows it passing.
"""

import os
import re
from pathlib import Path

from grader import kit
from grader.check.results import ExerciseResult, Report
from grader.exercises import BY_NAME, NAMES
from grader.paths import default_submission
from grader.style import mark, paint, shown_command

ISOLATION = {
    "namespaces": "your code ran confined in namespaces of its own",
    "user+landlock": "your code ran as a user of its own, seeing only Python and its own files (Landlock)",
    "user": "your code ran as a user of its own",
    "landlock": "your code ran as you, seeing only Python and its own files, with no network and no other process (Landlock)",
    "none": "your code ran unconfined, as you",
}
HIDDEN_LATER = "the hidden checks run when your work is graded"
STATUS_WORDS = {
    "passed": "passed",
    "failed": "failed",
    "not_started": "not started",
    "error": "error",
}
COLOURS = {"passed": "green", "failed": "red", "error": "red", "not_started": "yellow"}
# "f raised E: ... (file.py, line N: code)."
RAISED = re.compile(r"^(\S+ raised \w+).*\((\S+\.py, line \d+)")
NUMBER = re.compile(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?")


def cause(message: str) -> str:
    """What a failure says is wrong, without its numbers: the same for two checks that fail the same way on other inputs."""
    lines = message.strip().splitlines() or [""]
    # a lead-in says nothing alone
    first = " ".join(lines[:2]) if lines[0].endswith(":") and len(lines) > 1 else lines[0]
    raised = RAISED.match(first)
    return " at ".join(raised.groups()) if raised else NUMBER.sub("#", first)


def points(value: float) -> str:
    """Points with one decimal, as the table shows them."""
    return f"{value:.1f}"


def submission_args(folder: Path, solutions: bool) -> tuple[str, ...]:
    """The options that name this submission again on the command line."""
    if solutions:
        return ("--solutions",)
    if folder.resolve() == default_submission().resolve():
        return ()
    try:
        return ("--submission", str(folder.resolve().relative_to(Path.cwd().resolve())))
    except ValueError:
        return ("--submission", str(folder))


def shown_folder(folder: Path) -> str:
    """The folder as the student would type it, ending in a separator: "exercises/"."""
    try:
        return str(Path(folder).absolute().relative_to(Path.cwd())) + os.sep
    except ValueError:
        return str(folder) + os.sep


def details(result: ExerciseResult, where: tuple[str, ...] = (), own: bool = True) -> list[str]:
    """The lines that explain an exercise that did not pass; own: the folder is the student's own exercises/, where try stops."""
    title = BY_NAME[result.name].title
    lines = [f"{mark(result.status)} {paint(result.name, bold=True)}: {title}"]
    if result.status == "not_started":
        functions = BY_NAME[result.name].functions
        verb = "raises" if len(functions) == 1 else "raise"
        lines.append(f"    not started: {', '.join(functions)} still {verb} NotImplementedError.")
        return lines
    if result.hidden_only_failure:
        (seen, public), (passed, hidden) = result.counts(True), result.counts(False)
        lines.append(
            f"    passes every public check ({seen} of {public}) and fails {hidden - passed} of {hidden} hidden: "
            f"in the student's kit `grader check {result.name}` shows it passing."
        )
    if report_checks(result) == "all" and len(result.functions) > 1:
        lines.append(f"    points by function: {shares(result)}.")
    said: dict[
        str, str
    ] = {}  # cause -> the check whose message said it in full: one message per cause
    for check in result.checks:
        if check.status == "passed":
            continue
        word = STATUS_WORDS[check.status] + (
            "" if report_checks(result) == "public" else ", public" if check.public else ", hidden"
        )
        lines.append(f"  {paint(check.id, fg=COLOURS[check.status])} ({word})")
        if (first := said.setdefault(cause(check.message), check.id)) != check.id:
            lines.append(f"      fails the same way as {first} above, on an input of its own.")
            continue
        lines += [f"      {line}" for line in check.message.splitlines()]
    if result.note:
        lines.append(f"  Note: {result.note}")
    lines += [f"  Note: {said}" for said in passing_notes(result)]
    if result.status == "failed" and own:
        lines.append(
            f"  Debug it: {shown_command('try', result.name, *where)} runs your functions on the input they last failed "
            "on, in this terminal, where print() and breakpoint() work."
        )
    elif result.status == "failed":  # another's folder keeps no input, and its code runs confined
        lines.append(
            f"  Debug it: {shown_command('try', result.name, *where)} runs these functions, confined, on a small worked example."
        )
    return lines


def passing_notes(result: ExerciseResult) -> list[str]:
    """The notes passing checks gave (a float32 input made float64), each once, in check order."""
    return list(
        dict.fromkeys(
            check.message for check in result.checks if check.status == "passed" and check.message
        )
    )


def shares(result: ExerciseResult) -> str:
    """Each function's points of its share: "causal_mask 0.0 of 5, apply_causal_mask 10.0 of 10"."""
    told = []
    for name, earned in result.functions.items():
        why = (
            f" (it passes {earned['passed']} of its {earned['checks']} checks, but {earned['why'].removeprefix('it ')})"
            if "why" in earned
            else ""
        )
        told.append(f"{name} {points(earned['points'])} of {earned['max_points']:g}{why}")
    return ", ".join(told)


def printed(report: Report) -> list[str]:
    """Everything the student's functions printed, check by check (`grader check --output`)."""
    lines = []
    for check in (check for result in report.exercises for check in result.checks if check.printed):
        lines += [f"  {paint(check.id, bold=True)} printed:"] + [
            f"    {line}" for line in check.printed.splitlines()
        ]
    return [
        paint("What your code printed, check by check:", bold=True),
        *(lines or ["  nothing."]),
        "",
    ]


def report_checks(result: ExerciseResult) -> str:
    """Whether an exercise's verdict comes from the public checks alone or from all of them."""
    return "public" if result.checks and all(check.public for check in result.checks) else "all"


def public_line(report: Report) -> str:
    """The student's kit's summary, on every run: what passed of what ran, and what did not run."""
    passed, ran = report.public_counts()
    return f"public checks: {passed} of {ran} pass · {HIDDEN_LATER}"


def public_table(report: Report) -> list[str]:
    """The student's kit's table: each exercise's public checks, no points (the grade comes from all checks)."""
    rows = [f"  {'exercise':<10}{'status':<13}{'public checks':>14}"]
    for result in report.exercises:
        passed, ran = result.counts(True)
        status = paint(f"{STATUS_WORDS[result.status]:<13}", fg=COLOURS[result.status])
        rows.append(f"{mark(result.status)} {result.name:<10}{status}{f'{passed}/{ran}':>14}")
    rows.append(paint(f"  {public_line(report)}", bold=True))
    return rows


def table(report: Report) -> list[str]:
    """The summary table: one row per exercise and the total; public checks only in the student's kit."""
    if report.checks == "public":
        return public_table(report)
    rows = [f"  {'exercise':<10}{'status':<13}{'public':>7}{'hidden':>8}{'points':>15}"]
    for result in report.exercises:
        public, hidden = ("{}/{}".format(*result.counts(kind)) for kind in (True, False))
        status = paint(f"{STATUS_WORDS[result.status]:<13}", fg=COLOURS[result.status])
        score = f"{points(result.points)} / {points(result.max_points)}"
        rows.append(
            f"{mark(result.status)} {result.name:<10}{status}{public:>7}{hidden:>8}{score:>15}"
        )
    total = f"{points(report.points)} / {points(report.max_points)}"
    rows.append(paint(f"  {'total':<38}{total:>15}", bold=True))
    return rows


def next_step(report: Report, folder: Path, solutions: bool) -> list[str]:
    """What to do now, and how to replay the checks exactly."""
    where = submission_args(folder, solutions)
    todo = [result for result in report.exercises if result.status != "passed"]
    if not todo:
        return [all_pass(report, where)]
    first = todo[0]
    name = first.name
    if first.grader_fault:
        return [
            f"The grader could not run the checks of {name}: that is not about your code, so there is nothing to fix in {name}.py.",
            "Report the message above to your instructor"
            + (
                "."
                if kit.is_student_kit()
                else f"; {shown_command('check', '--solutions')} shows whether the grader works on this machine."
            ),
        ]
    if first.cause:
        step = f"Next: fix {first.cause} first (the note above says why), then run {shown_command('check', first.cause, name, *where)}."
    elif first.status == "not_started":
        names = ", ".join(f"{function}()" for function in BY_NAME[name].functions)
        step = f"Next: fill in {names} in {shown_folder(folder)}{name}.py, then run {shown_command('check', name, *where)}."
    elif first.status == "error":
        step = f"Next: fix what stops {name}.py from running (the message above says what), then run {shown_command('check', name, *where)}."
    else:
        step = f"Next: fix {name} from its first message above, then run {shown_command('check', name, *where)}."
    return [
        step,
        f"Stuck? {shown_command('hint', first.cause or name, *([] if solutions else where))} gives one hint at a time.",
        f"Replay: the checks are deterministic (Hypothesis seed {report.seed}); "
        f"{shown_command('check', name, *where)} reruns exactly the same examples.",
    ]


def all_pass(report: Report, where: tuple[str, ...]) -> str:
    """What to do when every exercise checked passes: the comparison once all five have, else the rest."""
    if where == ("--solutions",):
        return "The reference solutions pass every check that was run, public and hidden."
    compare = shown_command("compare", *where)
    every = {result.name for result in report.exercises} == set(NAMES)
    if report.checks == "public":
        said = f"{public_line(report).capitalize()}. "
        return said + (
            f"All five exercises pass their public checks: run {compare}."
            if every
            else f"Once all five exercises pass their public checks, run {compare}."
        )
    if every:
        return f"All five exercises pass every check, public and hidden: run {compare}."
    return f"Every check that was run passes, public and hidden. Once all five exercises pass, run {compare}."


def render(
    report: Report, folder: Path, solutions: bool = False, output: bool = False, own: bool = True
) -> str:
    """The whole report as text, styled for a terminal or plain for a pipe; output adds all the student's code printed.

    own: the folder is the student's own exercises/, where `grader try` stops at a breakpoint.
    """
    which = "the public checks" if report.checks == "public" else "the public and the hidden checks"
    lines = [
        f"Checked {folder} with {which} (Hypothesis seed {report.seed}; {ISOLATION[report.isolation]}).",
        "",
    ]
    where = () if solutions else submission_args(folder, solutions)
    for result in report.exercises:
        if result.status != "passed":
            lines += details(result, where, solutions or own) + [""]
        elif result.note or passing_notes(result):
            lines += [
                f"{mark('passed')} {result.name}: {said}"
                for said in [result.note] * bool(result.note) + passing_notes(result)
            ] + [""]
    lines += (
        (printed(report) if output else [])
        + table(report)
        + [""]
        + next_step(report, folder, solutions)
    )
    copied = [f"{e.name}.py" for e in report.exercises if e.same_as_reference]
    if copied:
        lines += [
            "",
            paint(
                f"For the instructor: {', '.join(copied)} {'is' if len(copied) == 1 else 'are'} byte for byte the kit's reference solution.",
                bold=True,
            ),
        ]
    return "\n".join(lines)
