"""`grader report CSV --similarity FILE`: near-copies of the published reference and between submissions, for the instructor to judge.

copydetect's winnowing (MOSS's algorithm) fingerprints each of the five modules without its
docstrings (text, not code: a copy that dropped them is still a copy), the stubs as boilerplate,
so the code every student was given counts for no one. Each submission gets the share
of its own code that solutions/ holds (the repository is public); each pair of submissions, the share
that the other holds of what is not the reference's too, so two copies of the reference are listed
once each, against it. Modules that are exact copies are named as well. A share is evidence to read,
never a penalty by itself.
"""

import ast
import functools
import html
import io
import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np

from grader.course.rows import modules_folder, shown
from grader.course.stubs import stub_source, write_stubs
from grader.paths import MODULES, SOLUTIONS_DIR

NOISE = 25  # copydetect's k: shorter runs of tokens than this are never a match
WINDOW = 1  # copydetect's winnowing window; 1 keeps every fingerprint (the submissions are small)
LEAST = 2 * NOISE  # tokens a pair must share (about two lines of code) for its share to count: less is no evidence
REFERENCE = "solutions/ (the published reference)"
SHOWN_LINES = 12  # shared lines shown per module of a pair
CAUTION = "Read the shared lines before concluding anything: short exercises have few ways to be right."
STYLE = """body{font:15px/1.4 system-ui,sans-serif;margin:2em;max-width:70em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{padding:.25em .8em;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}td.n,th.n{text-align:right}
pre{margin:.2em 0 .8em;font-size:13px;white-space:pre-wrap;background:#f6f6f6;padding:.4em}h1{font-size:1.5em}
h2{font-size:1.15em;margin-top:1.5em}h3{font-size:1em;margin:1.2em 0 .2em}p.note{color:#555;font-size:.9em}a{white-space:nowrap}"""


@dataclass
class Pair:
    """A submission and another (or the reference), how much of its code the other holds, and the shared lines."""

    first: str
    second: str
    score: float  # the larger of the two shares of code held by the other, over the five modules
    tokens: int = 0  # how many tokens of the first's code the second holds
    exact: list[str] = field(default_factory=list)  # modules identical byte for byte (a stub, or the reference between two, left out)
    lines: dict[str, list[str]] = field(default_factory=dict)  # module -> shared lines of the first


def fingerprints(folder: Path, boilerplate: dict) -> dict:
    """Each module's copydetect fingerprint (of its code without docstrings) and bytes, for the modules the folder has."""
    found = {}
    for name in MODULES:
        path = folder / f"{name}.py"
        if path.is_file() and not path.is_symlink():
            found[name] = (fingerprint(path.read_bytes(), boilerplate[name]), path.read_bytes())
    return found


def fingerprint(source: bytes, boilerplate=None):
    """copydetect's fingerprint of a module's code, its docstrings left out."""
    from copydetect import CodeFingerprint

    code = without_docstrings(source.decode("utf-8", errors="replace"))
    return CodeFingerprint("module.py", NOISE, WINDOW, boilerplate, language="python", fp=io.StringIO(code))


def without_docstrings(code: str) -> str:
    """The code with the lines of its module's, classes' and functions' docstrings removed; as it is if it does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    dropped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                dropped.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return "".join(line for number, line in enumerate(code.splitlines(keepends=True), 1) if number not in dropped)


def compare(first: str, a: dict, second: str, b: dict, given: dict[str, set[bytes]]) -> Pair:
    """How much of each one's code (tokens the boilerplate does not cover) the other holds, over the modules both have."""
    from copydetect import compare_files

    own = [0.0, 0.0]
    held = [0.0, 0.0]
    pair = Pair(first, second, 0.0)
    for name in sorted(set(a) & set(b)):
        (fa, da), (fb, db) = a[name], b[name]
        if da == db and da not in given[name]:
            pair.exact.append(f"{name}.py")
        overlap, shares, (slices_a, _) = compare_files(fa, fb)
        for side, (fp, share) in enumerate(((fa, shares[0]), (fb, shares[1]))):
            own[side] += fp.token_coverage
            held[side] += share * fp.token_coverage
        pair.tokens += int(overlap)
        shared_lines = lines_of(fa.raw_code, slices_a, stub_lines(name)) if overlap else []
        if shared_lines:
            pair.lines[f"{name}.py"] = shared_lines
    pair.score = max(h / o if o else 0.0 for h, o in zip(held, own))
    return pair


@functools.cache
def stub_lines(name: str) -> frozenset[str]:
    """The stripped lines of a module's stub: what every student was given, never shown as shared."""
    return frozenset(line.strip() for line in stub_source(name).splitlines())


def lines_of(text: str, slices, given: frozenset[str]) -> list[str]:
    """The lines a copied slice covers from their first character to their last, the stub's left out, in order, at most SHOWN_LINES.

    A line a slice only touches (a run that ends on its first word) is not shown: it may differ.
    """
    spans = list(zip((int(s) for s in slices[0]), (int(e) for e in slices[1])))
    lines, at = [], 0
    for line in text.splitlines(keepends=True):
        body = line.strip()
        first = at + len(line) - len(line.lstrip())
        last = first + len(body)
        at += len(line)
        if body and body not in given and any(start <= first and last <= end for start, end in spans):
            lines.append(line.rstrip("\r\n"))
            if len(lines) == SHOWN_LINES:
                break
    return lines


def hashes(path: Path, boilerplate=None) -> np.ndarray:
    """A module's fingerprints, sorted, to leave out of every other module's."""
    return np.array(sorted(fingerprint(path.read_bytes(), boilerplate).hashes))


def pairs(dirs: dict[str, Path], threshold: float) -> tuple[list[Pair], list[Pair]]:
    """(each submission against the reference, each pair of submissions) sharing at least threshold or an exact module, closest first."""
    with tempfile.TemporaryDirectory(prefix="grader-similarity-") as tmp:
        stubs = write_stubs(Path(tmp) / "stubs")
        given = {name: hashes(stubs / f"{name}.py") for name in MODULES}
    both = {name: np.union1d(given[name], hashes(SOLUTIONS_DIR / f"{name}.py", given[name])) for name in MODULES}
    stub_bytes = {name: {stub_source(name).encode("utf-8")} for name in MODULES}
    reference_bytes = {name: stub_bytes[name] | {(SOLUTIONS_DIR / f"{name}.py").read_bytes()} for name in MODULES}
    folders = {label: modules_folder(Path(folder)) for label, folder in dirs.items()}
    own = {label: fingerprints(folder, given) for label, folder in folders.items()}
    beyond = {label: fingerprints(folder, both) for label, folder in folders.items()}
    reference = fingerprints(SOLUTIONS_DIR, given)
    of_reference = [compare(label, own[label], REFERENCE, reference, stub_bytes) for label in own]
    between = [compare(a, beyond[a], b, beyond[b], reference_bytes) for a, b in itertools.combinations(beyond, 2)]
    return kept(of_reference, threshold), kept(between, threshold)


def kept(found: list[Pair], threshold: float) -> list[Pair]:
    """The pairs sharing at least threshold of their code (and LEAST tokens), or an exact module, closest first."""
    shown_pairs = (p for p in found if (p.score >= threshold and p.tokens >= LEAST) or p.exact)
    return sorted(shown_pairs, key=lambda p: (-p.score, p.first, p.second))


def line(pair: Pair, width: int) -> str:
    """A pair in one line: its share, who, and what is identical or shared."""
    who = pair.first if pair.second == REFERENCE else f"{pair.first}  ~  {pair.second}"
    what = [f"identical: {', '.join(pair.exact)}"] if pair.exact else []
    what += [f"partly shared: {', '.join(partly(pair))}"] if partly(pair) else []
    return f"  {pair.score:4.0%}  {who:<{width}}  {'; '.join(what)}".rstrip()


def text(of_reference: list[Pair], between: list[Pair], threshold: float, submissions: int) -> str:
    """The pairs as the terminal shows them: one line each, the shared lines being the page's."""
    width = max((len(p.first if p.second == REFERENCE else f"{p.first}  ~  {p.second}") for p in of_reference + between), default=0)
    lines = [
        f"Similarity of {submissions} submissions (copydetect's winnowing; the stubs left out), {threshold:.0%} or more or an exact module:"
    ]
    lines += ["", f"Of the published reference ({len(of_reference)}), the share of the student's own code that it holds:"]
    lines += [line(p, width) for p in of_reference] or ["  none"]
    lines += ["", f"Between submissions ({len(between)}), leaving out what the reference has too:"]
    lines += [line(p, width) for p in between] or ["  none"]
    return "\n".join(lines + ["", CAUTION])


def partly(pair: Pair) -> list[str]:
    """The modules the pair shares lines of without being identical."""
    return [module for module in pair.lines if module not in pair.exact]


def details(number: int, pair: Pair) -> str:
    """One pair's shared lines, module by module (an identical module is named, not repeated), as a section of the page."""
    shared = "".join(f"<b>{html.escape(m)}</b><pre>{html.escape(chr(10).join(pair.lines[m]))}</pre>" for m in partly(pair))
    title = f"{pair.first} ~ {pair.second}: {pair.score:.0%}"
    exact = f"<p>Identical: {html.escape(', '.join(pair.exact))}.</p>" if pair.exact else ""
    return f"<h3 id='pair{number}'>{html.escape(title)}</h3>{exact}{shared or '<p>No other line in common.</p>'}"


def table(table_id: str, found: list[Pair], start: int, with_column: bool) -> str:
    """The pairs as a table, each linked to its shared lines below."""
    head = "<th class='n'>shared</th><th>submission</th>" + ("<th>with</th>" if with_column else "")
    head += "<th>identical modules</th><th>partly shared</th><th></th>"
    rows = [
        f"<tr><td class='n'>{p.score:.0%}</td><td>{html.escape(p.first)}</td>"
        + (f"<td>{html.escape(p.second)}</td>" if with_column else "")
        + f"<td>{html.escape(', '.join(p.exact)) or '-'}</td><td>{html.escape(', '.join(partly(p))) or '-'}</td>"
        + f"<td><a href='#pair{n}'>shared lines</a></td></tr>"
        for n, p in enumerate(found, start)
    ]
    return f"<table id='{table_id}'><tr>{head}</tr>{''.join(rows) or '<tr><td colspan=6>none</td></tr>'}</table>"


def page(of_reference: list[Pair], between: list[Pair], threshold: float, submissions: int) -> str:
    """The pairs as one self-contained HTML page, without script: two tables, then each pair's shared lines."""
    sections = "".join(details(n, p) for n, p in enumerate(of_reference + between))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Similarity</title><style>{STYLE}</style></head><body>
<h1>Similarity of {submissions} submissions: {threshold:.0%} of their code or more, or an exact module</h1>
<p class="note">copydetect's winnowing (MOSS's algorithm), which ignores names, spacing and comments; the stubs count for no one.
{html.escape(CAUTION)}</p>
<h2>Of the published reference</h2><p class="note">The share of the student's own code that solutions/ holds.</p>
{table("reference", of_reference, 0, False)}
<h2>Between submissions</h2><p class="note">The share one holds of the other's code, leaving out what the reference has too.</p>
{table("pairs", between, len(of_reference), True)}
<h2>Shared lines</h2>{sections or "<p>none</p>"}
</body></html>
"""


def similarity(dirs, threshold: float = 0.5, html_file: Path | None = None) -> int:
    """Print the pairs sharing at least threshold of their code, and write them as HTML; 2 when the threshold or copydetect is wrong.

    dirs: the submissions' folders, or a dict naming each (the class report names them by student).
    """
    if not 0 < threshold <= 1:
        click.echo("The threshold is a share of the code, more than 0 and at most 1 (0.5 is half).", err=True)
        return 2
    try:
        import copydetect  # noqa: F401
    except ImportError:
        click.echo("The similarity report needs copydetect: pip install copydetect", err=True)
        return 2
    named = dirs if isinstance(dirs, dict) else {shown(str(d)): Path(d) for d in dirs}
    of_reference, between = pairs(named, threshold)
    click.echo(text(of_reference, between, threshold, len(named)))
    if html_file is not None:
        Path(html_file).write_text(page(of_reference, between, threshold, len(named)), encoding="utf-8")
        click.echo(f"\nWrote {html_file}: each pair's shared lines are there.")
    return 0
