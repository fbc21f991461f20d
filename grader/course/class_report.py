"""`grader report CSV`: the class at a glance after `grader batch`, as a table in the terminal and one self-contained HTML page.

Per check, how many students failed it; per known mistake, how many made it; each exercise's
points; the slowest submissions. Read from the batch CSV only, so it costs no grading. With
--similarity, the near-copies between the CSV's folders and of the reference (similarity.py).
"""

import csv
import html
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import click

from grader.exercises import EXERCISES

SLOWEST = 5  # submissions listed by time
STYLE = """body{font:15px/1.4 system-ui,sans-serif;margin:2em;max-width:60em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:.2em .8em;text-align:left;border-bottom:1px solid #ddd}
td.n{text-align:right;font-variant-numeric:tabular-nums}.bar{background:#c0392b;height:.8em;display:inline-block}
.ok{background:#27ae60}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.5em}"""


class ReportError(Exception):
    """The CSV cannot be read as `grader batch` writes it; the message says why."""


@dataclass
class ClassReport:
    """What the class did, counted from the batch CSV's rows."""

    students: int
    statuses: Counter
    points: dict[str, list[float]]  # exercise -> each graded student's points
    failed_checks: Counter
    mistakes: Counter
    slowest: list[tuple[str, float]]
    folders: list[str]  # every row's folder, for the similarity report


def read(csv_file: Path) -> ClassReport:
    """The class report of a batch CSV."""
    try:
        with Path(csv_file).open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ReportError(f"cannot read {csv_file} ({error}): give the CSV that `grader batch --csv` wrote") from None
    if not rows or "failed checks" not in rows[0]:
        raise ReportError(f"{csv_file} has no rows with a 'failed checks' column: rerun `grader batch` with this kit to write them")
    graded = [row for row in rows if row.get("status") in ("passed", "graded")]
    points = {e.name: [float(row[e.name]) for row in graded if row.get(e.name)] for e in EXERCISES}
    failed = Counter(check for row in graded for check in (row.get("failed checks") or "").split())
    mistakes = Counter(m for row in graded for m in (row.get("mistakes") or "").split("; ") if m)
    timed = sorted(((row["student"], float(row.get("seconds") or 0)) for row in rows), key=lambda pair: -pair[1])
    statuses = Counter(row.get("status", "") for row in rows)
    return ClassReport(len(rows), statuses, points, failed, mistakes, timed[:SLOWEST], [row.get("folder", "") for row in rows])


def mean(values: list[float]) -> float:
    """The mean, 0 for none."""
    return sum(values) / len(values) if values else 0.0


def text(report: ClassReport) -> str:
    """The report as plain tables for a terminal."""
    statuses = ", ".join(f"{count} {status}" for status, count in report.statuses.most_common())
    lines = [f"{report.students} submissions: {statuses}.", "", f"{'exercise':<10} {'mean':>6} {'of':>4}  full points"]
    for exercise in EXERCISES:
        got = report.points[exercise.name]
        full = sum(p == exercise.points for p in got)
        lines.append(f"{exercise.name:<10} {mean(got):>6.1f} {exercise.points:>4g}  {full} of {len(got)}")
    lines += ["", "Checks failed, most often first:"]
    lines += [f"  {count:>3}  {check}" for check, count in report.failed_checks.most_common()] or ["  none"]
    lines += ["", "Known mistakes, most often first:"]
    lines += [f"  {count:>3}  {mistake}" for mistake, count in report.mistakes.most_common()] or ["  none named"]
    lines += ["", "Slowest submissions:"]
    lines += [f"  {seconds:>6.1f} s  {student}" for student, seconds in report.slowest]
    return "\n".join(lines)


def bar(count: float, most: float, good: bool = False) -> str:
    """An inline bar, as wide as count is of most."""
    width = 0 if most == 0 else round(12 * count / most, 2)
    return f'<span class="bar{" ok" if good else ""}" style="width:{width}em"></span>'


def counted_rows(counter: Counter, students: int) -> str:
    """Table rows of a counter: count, bar, what."""
    most = max(counter.values(), default=0)
    cells = [
        f'<tr><td class="n">{count}</td><td>{bar(count, most)}</td><td>{html.escape(name)}</td></tr>'
        for name, count in counter.most_common()
    ]
    return "".join(cells) or f'<tr><td colspan="3">none of the {students}</td></tr>'


def page(report: ClassReport, title: str) -> str:
    """The report as one HTML page with its style inline and no script: bars where a glance beats a number."""
    exercises = "".join(
        f"<tr><td>{e.name}</td><td class='n'>{mean(report.points[e.name]):.1f} / {e.points:g}</td>"
        f"<td>{bar(round(mean(report.points[e.name]), 1), e.points, True)}</td>"
        f"<td class='n'>{sum(p == e.points for p in report.points[e.name])} of {len(report.points[e.name])}</td></tr>"
        for e in EXERCISES
    )
    statuses = ", ".join(f"{count} {html.escape(status)}" for status, count in report.statuses.most_common())
    slowest = "".join(f"<tr><td class='n'>{s:.1f} s</td><td>{html.escape(name)}</td></tr>" for name, s in report.slowest)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{STYLE}</style></head><body>
<h1>{html.escape(title)}</h1><p>{report.students} submissions: {statuses}.</p>
<h2>Points per exercise</h2><table id="exercises"><tr><th>exercise</th><th>mean</th><th></th><th>full points</th></tr>{exercises}</table>
<h2>Checks failed, most often first</h2><table id="checks"><tr><th>students</th><th></th><th>check</th></tr>{counted_rows(report.failed_checks, report.students)}</table>
<h2>Known mistakes, most often first</h2><table id="mistakes"><tr><th>students</th><th></th><th>mistake</th></tr>{counted_rows(report.mistakes, report.students)}</table>
<h2>Slowest submissions</h2><table id="slowest"><tr><th>time</th><th>student</th></tr>{slowest}</table>
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
    return similarity([Path(folder) for folder in report.folders if Path(folder).is_dir()], html_file=similar_file)
