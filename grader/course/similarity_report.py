"""`grader report CSV --similarity FILE --pairs FILE`: the near-copies in the terminal, as one HTML page and as a CSV of ranked pairs.

Every id, name and line of code is a student's: each leaves through grader/outlet.py for its medium.
"""

import csv
from pathlib import Path

import click

from grader import outlet
from grader.course.similarity import REFERENCE, Found, Pair, Submission, similar

CAUTION = "A pair is evidence to read, never a penalty by itself: short exercises have few ways to be right."
# fmt: skip
PAIR_COLUMNS = (
    "student",
    "other",
    "rank",
    "shared tokens",
    "shared lines",
    "student's share",
    "other's share",
    "modules",
    "identical modules",
    "student name",
    "other name",
)
STYLE = """body{font:15px/1.4 system-ui,sans-serif;margin:2em;max-width:90em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{padding:.25em .8em;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}th,td.n,a{white-space:nowrap}
td.n,th.n{text-align:right}td.words{max-width:28em;overflow-wrap:anywhere}
table.side{width:100%;table-layout:fixed}table.side td{width:50%}pre{margin:.2em 0;font-size:13px;white-space:pre-wrap;background:#f6f6f6;
padding:.4em;overflow-wrap:anywhere}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.5em}h3{font-size:1em;margin:1.6em 0 .2em}
p.note{color:#555;font-size:.9em}b.ref{color:#8e44ad}"""


def who(submission: Submission) -> str:
    """A submission as a reader knows it: its id, and its name when there is one."""
    return (
        f"{submission.id} ({submission.name})"
        if submission.name and submission.name != submission.id
        else submission.id
    )


def percent(pair: Pair) -> str:
    return " ".join(f"{share:.0%}" for share in pair.shares())


def what(pair: Pair) -> str:
    """Where the shared code is, and which modules are the same byte for byte."""
    parts = [", ".join(pair.modules)] if pair.modules else []
    return "; ".join(
        parts + ([f"identical: {', '.join(pair.identical)}"] if pair.identical else [])
    )


def summary(found: Found, least: int) -> list[str]:
    """What was compared and how, what was listed, and what was not compared, in lines of words."""
    lines = [
        f"Similarity of {found.compared} submissions: {len(found.pairs)} listed, closest first, of {found.above} sharing {least} tokens "
        f"of code or more (of the {found.measured} measured, the closest of the {found.candidates} pairs that share anything uncommon, "
        "and the copies of the reference). Names, comments, spacing and docstrings do not count; "
        f"neither do the stubs, nor, between two students, the published reference (its copies are listed against it) or "
        f"code held by more than {found.common} submissions."
    ]
    lines += [
        f"Not compared, its folder not found: {outlet.terminal(s.shown or s.id)}"
        for s in found.not_found
    ]
    lines += [
        f"Cut for size, {outlet.terminal(student)}: {'; '.join(cuts)}"
        for student, cuts in found.cut.items()
    ]
    return lines


def text(found: Found, least: int) -> str:
    """The pairs as the terminal shows them: one line each; the shared lines are the page's."""
    rows = [(f"{n:>4}", f"{p.tokens:>6}", f"{p.lines:>5}", f"{percent(p):>9}", outlet.terminal(f"{who(p.first)}  ~  {who(p.second)}"), what(p))
            for n, p in enumerate(found.pairs, 1)]  # fmt: skip
    width = max((len(r[4]) for r in rows), default=0)
    lines = [
        *summary(found, least),
        "",
        f"{'rank':>4}  {'tokens':>6}  {'lines':>5}  {'shares':>9}  {'student  ~  other':<{width}}  where",
    ]
    lines += [
        f"{r[0]}  {r[1]}  {r[2]}  {r[3]}  {r[4]:<{width}}  {r[5]}".rstrip() for r in rows
    ] or ["  none"]
    return "\n".join([*lines, "", CAUTION])


def side(part) -> str:
    """One submission's lines of a block, numbered, as a <pre>."""
    numbered = "\n".join(f"{n:>4}  {line}" for n, line in part.lines) + (
        f"\n      ... {part.more} more lines" if part.more else ""
    )
    return f"<b>{outlet.html_text(part.module)}</b><pre>{outlet.html_text(numbered)}</pre>"


def section(number: int, pair: Pair) -> str:
    """One pair's shared lines, block by block, the two side by side."""
    title = f"{number}. {who(pair.first)} ~ {who(pair.second)}: {pair.tokens} tokens, {pair.lines} lines"
    head = f"<tr><th>{outlet.html_text(who(pair.first))}</th><th>{outlet.html_text(who(pair.second))}</th></tr>"
    rows = "".join(
        f"<tr><td>{side(b.first)}</td><td>{side(b.second)}</td></tr>" for b in pair.blocks
    )
    identical = (
        f"<p>Identical byte for byte: {outlet.html_text(', '.join(pair.identical))}.</p>"
        if pair.identical
        else ""
    )
    return f"<h3 id='pair{number}'>{outlet.html_text(title)}</h3>{identical}<table class='side'>{head}{rows}</table>"


def page(found: Found, least: int) -> str:
    """The pairs as one self-contained HTML page, without script: the ranked table, then each pair's shared lines side by side."""
    rows = "".join(
        f"<tr><td class='n'>{n}</td><td class='words'>{outlet.html_text(who(p.first))}</td><td class='words'>"
        + (
            f"<b class='ref'>{outlet.html_text(who(p.second))}</b>"
            if p.of_reference
            else outlet.html_text(who(p.second))
        )
        + f"</td><td class='n'>{p.tokens}</td><td class='n'>{p.lines}</td><td class='n'>{percent(p)}</td>"
        f"<td class='words'>{outlet.html_text(what(p)) or '-'}</td><td><a href='#pair{n}'>lines</a></td></tr>"
        for n, p in enumerate(found.pairs, 1)
    )
    head = "<tr><th class='n'>rank</th><th>student</th><th>other</th><th class='n'>shared tokens</th><th class='n'>shared lines</th>"
    head += "<th class='n'>shares</th><th>where</th><th></th></tr>"
    notes = "".join(
        f"<p class='note'>{outlet.html_text(line)}</p>" for line in summary(found, least)
    )
    sections = "".join(section(n, p) for n, p in enumerate(found.pairs, 1))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Similarity</title><style>{STYLE}</style></head><body>
<h1>Similarity of {found.compared} submissions</h1>{notes}<p class="note">{outlet.html_text(CAUTION)} The shares: of each one's own
code, how much the other holds. Against <b class="ref">{REFERENCE}</b>: a copy of the published reference.</p>
<table id="pairs">{head}{rows or "<tr><td colspan=8>none</td></tr>"}</table>
<h2>Shared lines</h2>{sections or "<p>none</p>"}
</body></html>
"""


def write_pairs(found: Found, path: Path) -> None:
    """The listed pairs as a CSV, ranked: the two ids first, then what they share; every text cell inert in a spreadsheet."""
    with Path(path).open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(PAIR_COLUMNS)
        for n, p in enumerate(found.pairs, 1):
            first, second = p.shares()
            cells = (p.first.id, p.second.id, n, p.tokens, p.lines, f"{first:.3f}", f"{second:.3f}", ", ".join(p.modules),
                     ", ".join(p.identical), p.first.name, p.second.name)  # fmt: skip
            writer.writerow([outlet.csv_cell(c) if isinstance(c, str) else c for c in cells])


def similarity(
    submissions: list[Submission],
    html_file=None,
    pairs_file=None,
    least: int | None = None,
    top: int | None = None,
    anonymous=False,
) -> int:
    """Print the ranked near-copies, and write them as HTML and as a CSV of pairs; 0."""
    from grader.course.similarity import MIN_TOKENS, TOP

    least = MIN_TOKENS if least is None else least
    found = similar(submissions, least=least, top=TOP if top is None else top, anonymous=anonymous)
    click.echo(text(found, least))
    if html_file is not None:
        Path(html_file).write_text(page(found, least), encoding="utf-8")
        click.echo(f"\nWrote {html_file}: each pair's shared lines, side by side.")
    if pairs_file is not None:
        write_pairs(found, pairs_file)
        click.echo(
            f"Wrote {pairs_file}: the {len(found.pairs)} pairs, ranked, the two students' ids first."
        )
    return 0
