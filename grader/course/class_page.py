"""The class report as one self-contained HTML page: no script, no file beside it; every student string through grader/outlet.py.

The totals as an inline SVG histogram; bars scaled to the largest of their table, so the weakest
exercise and the most failed check stand out; from each check and mistake, the students concerned
(a list that opens, each a link to their row in the table of students); long texts wrap.
"""

import html

from grader import outlet
from grader.course.class_counts import (
    DID_NOT_RUN,
    NO_CHECKS,
    OUTCOMES,
    SLOWEST,
    ClassReport,
    exercise_rows,
    summary,
)
from grader.exercises import EXERCISES

STYLE = """body{font:15px/1.4 system-ui,sans-serif;margin:2em;max-width:72em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:.2em .7em;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.words{max-width:34em;overflow-wrap:anywhere}
.track{background:#e6e6e6;display:inline-block;width:12em;line-height:0;vertical-align:middle}.bar{background:#c0392b;height:.8em;display:inline-block}
.ok{background:#27ae60}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}p.note{color:#555;font-size:.9em;max-width:60em}
details{margin:.2em 0 .4em}summary{cursor:pointer;color:#555}details a{margin-right:.5em}tr:target{background:#fff3c4}
svg text{font:12px system-ui,sans-serif;fill:#333}"""
# the histogram's size in pixels, and the room below its bars for the labels
WIDTH, HEIGHT, FOOT = (720, 220, 34)


def bar(count: float, most: float, good: bool = False) -> str:
    """An inline bar, as wide as count is of most, on a grey track."""
    width = 0 if most == 0 else round(12 * count / most, 2)
    return f'<span class="track"><span class="bar{" ok" if good else ""}" style="width:{width}em"></span></span>'


def histogram(report: ClassReport) -> str:
    """The totals as an inline SVG bar chart, one bar per bin, its count above it."""
    bins = report.histogram
    most = max((count for _, count in bins), default=0) or 1
    step = WIDTH / len(bins)
    room = HEIGHT - FOOT - 18
    parts = []
    for n, (label, count) in enumerate(bins):
        high = room * count / most
        x, y = n * step + 4, HEIGHT - FOOT - high
        colour = "#27ae60" if label == "100" else "#c0392b" if label == "0" else "#7f8c8d"
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{step - 8:.1f}" height="{high:.1f}" fill="{colour}"/>'
        )
        parts.append(
            f'<text x="{x + (step - 8) / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle">{count}</text>'
        )
        parts.append(
            f'<text x="{x + (step - 8) / 2:.1f}" y="{HEIGHT - FOOT + 16}" text-anchor="middle">{html.escape(label)}</text>'
        )
    said = html.escape(", ".join(f"{count} at {label}" for label, count in bins if count))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="Totals: {said}">'
        f"<title>Totals: {said}</title>{''.join(parts)}"
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 4}" text-anchor="middle">total points (of 100)</text></svg>'
    )


def anchor(report: ClassReport, number: int) -> str:
    return f"<a href='#student{number}'>{outlet.html_text(report.students[number].id)}</a>"


def counted_rows(report: ClassReport, found: dict[str, list[int]], graded: int) -> str:
    """Rows of a check or mistake table: how many, a bar scaled to the most, the words (wrapping), and who, in a list that opens."""
    most = max((len(v) for v in found.values()), default=0)
    rows = []
    for what, numbers in found.items():
        who = " ".join(anchor(report, n) for n in numbers)
        rows.append(
            f"<tr><td class='n'>{len(numbers)}</td><td>{bar(len(numbers), most)}</td><td class='words'>{outlet.html_text(what)}"
            f"<details><summary>who: {len(numbers)} student{'s' if len(numbers) != 1 else ''}</summary>{who}</details></td></tr>"
        )
    return "".join(rows) or f"<tr><td colspan='3'>none of the {graded}</td></tr>"


def exercise_table(report: ClassReport) -> str:
    """Per exercise: the mean, how many got full points with a bar scaled to the best exercise, and the outcomes."""
    rows = exercise_rows(report)
    best = max((row[3] / row[4] for row in rows if row[4]), default=0)
    heads = "".join(f"<th class='n'>{words}</th>" for words in OUTCOMES.values())
    body = "".join(
        f"<tr><td>{name}</td><td class='n'>{mean:.1f} / {points:g}</td><td class='n'>{full} of {of}</td>"
        f"<td>{bar(full / of if of else 0, best, True)}</td>"
        + "".join(f"<td class='n'>{count}</td>" for count in outcomes)
        + "</tr>"
        for name, points, mean, full, of, *outcomes in rows
    )
    head = f"<tr><th>exercise</th><th class='n'>mean</th><th class='n'>full points</th><th>scaled to the best</th>{heads}</tr>"
    return f"<table id='exercises'>{head}{body}</table>"


def student_table(report: ClassReport) -> str:
    """One row per student, each its own anchor: id, name, status, total, each exercise's points, the mistakes named."""
    heads = "".join(f"<th class='n'>{e.name}</th>" for e in EXERCISES)
    rows = []
    for number, s in enumerate(report.students):
        points = "".join(
            f"<td class='n'>{s.points[e.name]:g}</td>"
            if e.name in s.points
            else "<td class='n'>-</td>"
            for e in EXERCISES
        )
        rows.append(
            f"<tr id='student{number}'><td>{outlet.html_text(s.id)}</td><td>{outlet.html_text(s.name)}</td>"
            f"<td>{outlet.html_text(s.status)}</td><td class='n'>{s.total:g}</td>{points}"
            f"<td class='words'>{outlet.html_text('; '.join(s.mistakes))}</td></tr>"
        )
    head = f"<tr><th>student</th><th>name</th><th>status</th><th class='n'>total</th>{heads}<th>mistakes named</th></tr>"
    return f"<table id='students'>{head}{''.join(rows)}</table>"


def page(report: ClassReport, title: str) -> str:
    """The report as one HTML page with its style inline and no script."""
    graded = len(report.graded)
    slowest = sorted(range(len(report.students)), key=lambda n: -report.students[n].seconds)[
        :SLOWEST
    ]
    slow_rows = "".join(
        f"<tr><td class='n'>{report.students[n].seconds:.1f} s</td><td>{anchor(report, n)}</td></tr>"
        for n in slowest
        if report.students[n].seconds
    )
    checks_note = (
        f"<p class='note'>{outlet.html_text(NO_CHECKS)}</p>" if report.source == "gradebook" else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{outlet.html_text(title)}</title><style>{STYLE}</style></head><body>
<h1>{outlet.html_text(title)}</h1><p>{outlet.html_text(summary(report))}</p>
<h2>Totals</h2>{histogram(report)}<p class="note">Every graded submission's total; a fault of the grader's and a missing submission are
left out. Green: 100; red: 0.</p>
<h2>Points per exercise</h2>{exercise_table(report)}<p class="note">Of the {graded} graded submissions. {outlet.html_text(DID_NOT_RUN)}</p>
{checks_note}<h2>Checks failed, most often first</h2><table id="checks"><tr><th class='n'>students</th><th>scaled to the most</th>
<th>check</th></tr>{counted_rows(report, report.by_check, graded)}</table>
<h2>Known mistakes, most often first</h2><table id="mistakes"><tr><th class='n'>students</th><th>scaled to the most</th>
<th>mistake</th></tr>{counted_rows(report, report.by_mistake, graded)}</table>
<h2>Students</h2>{student_table(report)}
<h2>Slowest submissions</h2><table id="slowest"><tr><th class='n'>time</th><th>student</th></tr>{slow_rows}</table>
</body></html>
"""
