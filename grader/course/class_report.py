"""`grader report CSV`: the class at a glance after `grader batch`, as a table in the terminal and one self-contained HTML page.

Per exercise, the mean points and how many students passed it, failed some checks, did not start it
or handed in code that did not run; per check, how many students failed it; per known mistake, how
many made it; the slowest submissions. Read from the batch CSV only, so it costs no grading. With
--similarity, the near-copies between the CSV's folders and of the reference (similarity.py).
"""

import csv
import html
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import click

from grader.course.errors import ReportError
from grader.exercises import EXERCISES

SLOWEST = 5  # submissions listed by time
STATUS_WORDS = {  # the batch's row statuses, in words a reader new to them understands
    "passed": "passed every check",
    "graded": "graded, with some check not passing",
    "unreadable": "unreadable (a module missing or a link)",
    "timeout": "stopped at the time limit",
    "error": "not graded (the grader stopped: see the CSV's reason)",
    "fault": "not graded (a fault in the grader: the next grader batch run regrades it)",
}
OUTCOMES = {"failed": "some checks fail", "not_started": "not started", "error": "did not run"}  # an exercise's statuses
DID_NOT_RUN = "Did not run: its module could not be imported, or it hung or crashed, so its checks stopped (not counted as failed below)."
STYLE = """body{font:15px/1.4 system-ui,sans-serif;margin:2em;max-width:60em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:.2em .8em;text-align:left;border-bottom:1px solid #ddd;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.track{background:#e6e6e6;display:inline-block;width:12em;line-height:0}
.bar{background:#c0392b;height:.8em;display:inline-block}.ok{background:#27ae60}h1{font-size:1.5em}
h2{font-size:1.15em;margin-top:1.5em}p.note{color:#555;font-size:.9em}"""


@dataclass
class ClassReport:
    """What the class did, counted from the batch CSV's rows."""

    students: int
    statuses: Counter
    points: dict[str, list[float]]  # exercise -> each graded student's points
    outcomes: dict[str, Counter]  # exercise -> how many graded students' exercise had each status
    failed_checks: Counter
    mistakes: Counter
    slowest: list[tuple[str, float]]
    folders: dict[str, str]  # student -> folder, for the similarity report


def read(csv_file: Path) -> ClassReport:
    """The class report of a batch CSV."""
    try:
        with Path(csv_file).open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ReportError(f"cannot read {csv_file} ({error}): give the CSV that `grader batch --csv` wrote") from None
    if not rows or "failed checks" not in rows[0]:
        raise ReportError(
            f"{csv_file} has no rows with a 'failed checks' column, so `grader batch` of this kit did not write it (nbgrader's "
            "export has no checks): rerun `grader batch` (on submitted/*/ASSIGNMENT for an nbgrader course) and report its CSV"
        )
    graded = [row for row in rows if row.get("status") in ("passed", "graded")]
    points = {e.name: [float(row[e.name]) for row in graded if row.get(e.name)] for e in EXERCISES}
    failed = Counter(check for row in graded for check in (row.get("failed checks") or "").split())
    mistakes = Counter(m for row in graded for m in (row.get("mistakes") or "").split("; ") if m)
    timed = sorted(((row["student"], float(row.get("seconds") or 0)) for row in rows), key=lambda pair: -pair[1])
    statuses = Counter(row.get("status", "") for row in rows)
    return ClassReport(len(rows), statuses, points, outcomes(graded), failed, mistakes, timed[:SLOWEST], folders(rows))


def outcomes(graded: list[dict]) -> dict[str, Counter]:
    """Per exercise, how many rows gave it each status (the CSV's `exercise statuses`: scores:passed softmax:error ...)."""
    counted: dict[str, Counter] = {e.name: Counter() for e in EXERCISES}
    for row in graded:
        for pair in (row.get("exercise statuses") or "").split():
            name, _, status = pair.partition(":")
            if name in counted:
                counted[name][status] += 1
    return counted


def folders(rows: list[dict]) -> dict[str, str]:
    """Each row's folder by its student, or by its folder where two rows name the same student."""
    names = Counter(row.get("student", "") for row in rows)
    return {
        (row.get("student", "") if names[row.get("student", "")] == 1 else row.get("folder", "")): row.get("folder", "") for row in rows
    }


def mean(values: list[float]) -> float:
    """The mean, 0 for none."""
    return sum(values) / len(values) if values else 0.0


def summary(report: ClassReport) -> str:
    """How many submissions, by status, in words."""
    order = sorted(report.statuses, key=lambda s: list(STATUS_WORDS).index(s) if s in STATUS_WORDS else len(STATUS_WORDS))
    counted = ", ".join(f"{report.statuses[status]} {STATUS_WORDS.get(status, status)}" for status in order)
    return f"{report.students} submissions: {counted}."


def text(report: ClassReport) -> str:
    """The report as plain tables for a terminal."""
    heads = "".join(f"  {words}" for words in OUTCOMES.values())
    lines = [summary(report), "", f"{'exercise':<10} {'mean':>6} {'of':>4}  {'full points':>11}{heads}"]
    for exercise in EXERCISES:
        got, counted = report.points[exercise.name], report.outcomes[exercise.name]
        full = f"{sum(p == exercise.points for p in got)} of {len(got)}"
        outcome_cells = "".join(f"  {counted[s]:>{len(words)}}" for s, words in OUTCOMES.items())
        lines.append(f"{exercise.name:<10} {mean(got):>6.1f} {exercise.points:>4g}  {full:>11}{outcome_cells}")
    lines += [DID_NOT_RUN, "", "Checks failed, most often first (students):"]
    lines += [f"  {count:>3}  {check}" for check, count in report.failed_checks.most_common()] or ["  none"]
    lines += ["", "Known mistakes, most often first (students):"]
    lines += [f"  {count:>3}  {mistake}" for mistake, count in report.mistakes.most_common()] or ["  none named"]
    lines += ["", "Slowest submissions:"]
    lines += [f"  {seconds:>6.1f} s  {student}" for student, seconds in report.slowest]
    return "\n".join(lines)


def bar(count: float, most: float, good: bool = False) -> str:
    """An inline bar, as wide as count is of most, on a grey track as wide as most."""
    width = 0 if most == 0 else round(12 * count / most, 2)
    return f'<span class="track"><span class="bar{" ok" if good else ""}" style="width:{width}em"></span></span>'


def counted_rows(counter: Counter, students: int) -> str:
    """Table rows of a counter: count, bar (out of every student), what."""
    cells = [
        f'<tr><td class="n">{count}</td><td>{bar(count, students)}</td><td>{html.escape(name)}</td></tr>'
        for name, count in counter.most_common()
    ]
    return "".join(cells) or f'<tr><td colspan="3">none of the {students}</td></tr>'


def exercise_rows(report: ClassReport) -> str:
    """The points table's rows: mean with a bar out of the exercise's points, then how many had each outcome."""
    rows = []
    for e in EXERCISES:
        got, counted = report.points[e.name], report.outcomes[e.name]
        outcome_cells = "".join(f"<td class='n'>{counted[s]}</td>" for s in OUTCOMES)
        rows.append(
            f"<tr><td>{e.name}</td><td class='n'>{mean(got):.1f} / {e.points:g}</td><td>{bar(round(mean(got), 1), e.points, True)}</td>"
            f"<td class='n'>{sum(p == e.points for p in got)} of {len(got)}</td>{outcome_cells}</tr>"
        )
    return "".join(rows)


def page(report: ClassReport, title: str) -> str:
    """The report as one HTML page with its style inline and no script: bars where a glance beats a number."""
    graded = sum(report.statuses[s] for s in ("passed", "graded"))
    heads = "".join(f"<th class='n'>{words}</th>" for words in OUTCOMES.values())
    slowest = "".join(f"<tr><td class='n'>{s:.1f} s</td><td>{html.escape(name)}</td></tr>" for name, s in report.slowest)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{STYLE}</style></head><body>
<h1>{html.escape(title)}</h1><p>{html.escape(summary(report))}</p>
<h2>Points per exercise</h2><table id="exercises">
<tr><th>exercise</th><th class='n'>mean</th><th></th><th class='n'>full points</th>{heads}</tr>{exercise_rows(report)}</table><p class="note">Of the {graded} graded submissions. {html.escape(DID_NOT_RUN)}</p>
<h2>Checks failed, most often first</h2><table id="checks"><tr><th class='n'>students</th><th></th><th>check</th></tr>{counted_rows(report.failed_checks, graded)}</table>
<h2>Known mistakes, most often first</h2><table id="mistakes"><tr><th class='n'>students</th><th></th><th>mistake</th></tr>{counted_rows(report.mistakes, graded)}</table>
<h2>Slowest submissions</h2><table id="slowest"><tr><th class='n'>time</th><th>student</th></tr>{slowest}</table>
</body></html>
"""


def class_report(csv_file: Path, html_file: Path | None = None, similar_file: Path | None = None) -> int:
    """`grader report CSV [--html FILE] [--similarity FILE]`: print the class report (and near-copies), write them as HTML.

    2 when the CSV cannot be read.
    """
    try:
        report = read(csv_file)
    except ReportError as error:
        click.echo(f"Cannot report: {error}.", err=True)
        return 2
    click.echo(text(report))
    if html_file is not None:
        Path(html_file).write_text(page(report, f"Attention by Hand: {Path(csv_file).name}"), encoding="utf-8")
        click.echo(f"\nWrote {html_file}: open it in a browser.")
    if similar_file is None:
        return 0
    from grader.course.similarity import similarity

    click.echo("")
    return similarity({name: Path(folder) for name, folder in report.folders.items() if Path(folder).is_dir()}, html_file=similar_file)
