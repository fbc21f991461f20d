"""`grader report SOURCE`: the class at a glance, from a `grader batch` CSV or nbgrader's gradebook, in the terminal and as HTML.

The totals as a histogram; per exercise, how many got full points (bars scaled to the best, so the
weakest stands out), the mean, and how many failed some checks, did not start it or handed in code
that did not run; per check and per known mistake, how many students and which; one row per
student; the slowest submissions. Read from what grading wrote, so it costs no grading. With
--similarity or --pairs, the near-copies (similarity_report.py). With --anonymise KEY, every
student is a stable pseudonym and no name, folder or message of theirs is written.
"""

import shutil
import sys
import textwrap
from pathlib import Path

import click

from grader import outlet
from grader.course import class_rows
from grader.course.class_counts import (
    DID_NOT_RUN,
    NO_CHECKS,
    OUTCOMES,
    SLOWEST,
    ClassReport,
    counted,
    exercise_rows,
    summary,
)
from grader.course.class_page import page
from grader.course.class_rows import Student
from grader.course.errors import ReportError
from grader.course.similarity import Submission
from grader.course.similarity_report import similarity
from grader.exercises import EXERCISES

BAR = 30  # characters of the longest bar in the terminal


def bar(count: float, most: float, longest: int = BAR) -> str:
    """A bar of block characters, as long as count is of most (longest at most); # where the terminal has no blocks."""
    block = "█"
    try:
        block.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        block = "#"
    return block * (round(longest * count / most) if most else 0)


def wrapped(text: str, first: str, indent: int, width: int) -> list[str]:
    """The text after first, wrapped to the width, its other lines indented (a word longer than a line is cut, never runs off)."""
    return textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=" " * indent, break_on_hyphens=False
    ) or [first.rstrip()]


def counted_lines(report: ClassReport, found: dict[str, list[int]], width: int) -> list[str]:
    """A check or mistake per entry: how many, a bar scaled to the most, its words, then who; every line within the width."""
    most = max((len(v) for v in found.values()), default=0)
    lines = []
    for what, numbers in found.items():
        lines += wrapped(
            outlet.terminal(what),
            f"  {len(numbers):>4}  {bar(len(numbers), most, 12):<12}  ",
            22,
            width,
        )
        lines += wrapped(
            ", ".join(outlet.terminal(report.students[n].id) for n in numbers),
            " " * 22 + "who: ",
            27,
            width,
        )
    return lines


def student_lines(report: ClassReport, width: int) -> list[str]:
    """One line per student (more when their mistakes wrap): id, status, total, each exercise's points, the mistakes named."""
    wide = max((len(outlet.terminal(s.id)) for s in report.students), default=2)
    heads = "".join(f" {e.name[:8]:>8}" for e in EXERCISES)
    lines = [f"  {'student':<{wide}}  {'status':<10} {'total':>6}{heads}  mistakes"]
    for s in report.students:
        points = "".join(
            f" {s.points[e.name]:>8g}" if e.name in s.points else f" {'-':>8}" for e in EXERCISES
        )
        first = f"  {outlet.terminal(s.id):<{wide}}  {outlet.terminal(s.status):<10} {s.total:>6g}{points}  "
        mistakes = outlet.terminal("; ".join(s.mistakes))
        if len(first) + 30 <= width or not mistakes:
            lines += wrapped(mistakes, first, len(first), width)
        else:  # too narrow a terminal for the mistakes beside the points: below them
            lines += [first.rstrip(), *wrapped(mistakes, " " * 8, 8, width)]
    return lines


def text(report: ClassReport) -> str:
    """The report as plain tables for a terminal, long words wrapped to its width."""
    width = max(shutil.get_terminal_size((100, 20)).columns - 2, 60)
    most = max((count for _, count in report.histogram), default=0)
    lines = [
        summary(report),
        "",
        "Totals (every graded submission; faults and missing ones left out):",
    ]
    lines += [
        f"  {label:>6}  {count:>4}  {bar(count, most)}".rstrip()
        for label, count in report.histogram
    ]
    rows = exercise_rows(report)
    best = max((row[3] / row[4] for row in rows if row[4]), default=0)
    heads = "".join(f"  {words}" for words in OUTCOMES.values())
    lines += [
        "",
        f"{'exercise':<10} {'mean':>6} {'of':>4}  {'full points':>11}{heads}  full points, scaled to the best",
    ]
    for name, points, mean, full, of, *outcomes in rows:
        cells = "".join(
            f"  {count:>{len(words)}}" for count, words in zip(outcomes, OUTCOMES.values())
        )
        share = full / of if of else 0
        lines.append(
            f"{name:<10} {mean:>6.1f} {points:>4g}  {f'{full} of {of}':>11}{cells}  {bar(share, best)}"
        )
    if report.source == "gradebook":
        lines.append(NO_CHECKS)
    lines += [DID_NOT_RUN, "", "Checks failed, most often first (students, then who):"]
    lines += counted_lines(report, report.by_check, width) or ["  none"]
    lines += ["", "Known mistakes, most often first (students, then who):"]
    lines += counted_lines(report, report.by_mistake, width) or ["  none named"]
    lines += ["", "Students:", *student_lines(report, width), "", "Slowest submissions:"]
    slowest = sorted(report.students, key=lambda s: -s.seconds)[:SLOWEST]
    lines += [f"  {s.seconds:>6.1f} s  {outlet.terminal(s.id)}" for s in slowest if s.seconds]
    return "\n".join(lines)


def anonymised(students: list[Student], key_file: Path) -> list[Student]:
    """The students under their pseudonyms: no name, folder shown or message of theirs (the folder is still read, not shown)."""
    from grader.course.pseudonyms import key, pseudonym

    secret = key(key_file)
    return [
        Student(
            pseudonym(secret, s.id),
            "",
            s.status,
            s.total,
            s.points,
            s.statuses,
            s.failed,
            s.mistakes,
            s.seconds,
            "",
            s.folder,
            "",
        )
        for s in students
    ]


def class_report(
    source: Path,
    html_file=None,
    similar_file=None,
    pairs_file=None,
    least=None,
    top=None,
    key_file=None,
    assignment="attention-by-hand",
) -> int:
    """`grader report SOURCE`: print the class report (and near-copies), write them as HTML and CSV; 2 when SOURCE cannot be read."""
    outputs = [Path(p).resolve() for p in (html_file, similar_file, pairs_file) if p is not None]
    try:
        if key_file is not None and Path(key_file).resolve() in outputs:
            raise ReportError(
                f"the key file {key_file} is also a report to write: keep the key apart, in a file of its own"
            )
        students, kind = class_rows.read(source, assignment)
        if key_file is not None:
            students = anonymised(students, key_file)
    except ReportError as error:
        click.echo(f"Cannot report: {error}.", err=True)
        return 2
    report = counted(students, kind)
    click.echo(text(report))
    if html_file is not None:
        Path(html_file).write_text(
            page(report, f"Attention by Hand: {Path(source).name}"), encoding="utf-8"
        )
        click.echo(f"\nWrote {html_file}: open it in a browser.")
    if similar_file is None and pairs_file is None:
        return 0
    click.echo("")
    submissions = [Submission(s.id, s.name, s.folder, s.shown or s.id) for s in students]
    return similarity(
        submissions, similar_file, pairs_file, least, top, anonymous=key_file is not None
    )
