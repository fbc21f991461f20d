"""`grader report CSV --similarity FILE`: near-copies between submissions and of the published reference, for the instructor to judge.

copydetect's winnowing (MOSS's algorithm) fingerprints each of the five modules, the stubs as
boilerplate, so the code every student was given counts for no one. Each pair of submissions, and
each submission against solutions/ (the repository is public), gets the share of its code that
the other holds, module by module, with the shared lines. Exact copies, by sha256, are named too.
A score is evidence to read, never a penalty by itself.
"""

import functools
import html
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
REFERENCE = "solutions/ (the published reference)"
SHOWN_LINES = 8  # shared lines shown per module of a pair


@dataclass
class Pair:
    """Two submissions (or one and the reference), how much of their code they share, and the shared lines."""

    first: str
    second: str
    score: float  # the larger of the two shares of code held by the other, over the five modules
    exact: list[str] = field(default_factory=list)  # modules identical byte for byte
    lines: dict[str, list[str]] = field(default_factory=dict)  # module -> shared lines of the first


def fingerprints(folder: Path, boilerplate: dict) -> dict:
    """Each module's copydetect fingerprint and bytes, for the modules the folder has."""
    from copydetect import CodeFingerprint

    found = {}
    for name in MODULES:
        path = folder / f"{name}.py"
        if path.is_file() and not path.is_symlink():
            found[name] = (CodeFingerprint(str(path), NOISE, WINDOW, boilerplate[name], language="python"), path.read_bytes())
    return found


def compare(first: str, a: dict, second: str, b: dict) -> Pair:
    """How much two submissions share, module by module."""
    from copydetect import compare_files

    tokens = shared = shared_b = tokens_b = 0
    pair = Pair(first, second, 0.0)
    for name in sorted(set(a) & set(b)):
        (fa, da), (fb, db) = a[name], b[name]
        if da == db and da != stub_source(name).encode("utf-8"):  # both left as given is no copy
            pair.exact.append(f"{name}.py")
        overlap, (share_a, share_b), (slices_a, _) = compare_files(fa, fb)
        tokens, tokens_b = tokens + len(fa.filtered_code), tokens_b + len(fb.filtered_code)
        shared, shared_b = shared + share_a * len(fa.filtered_code), shared_b + share_b * len(fb.filtered_code)
        shared_lines = lines_of(fa.raw_code, slices_a, stub_lines(name)) if overlap else []
        if shared_lines:
            pair.lines[f"{name}.py"] = shared_lines
    pair.score = max(shared / tokens if tokens else 0.0, shared_b / tokens_b if tokens_b else 0.0)
    return pair


@functools.cache
def stub_lines(name: str) -> frozenset[str]:
    """The stripped lines of a module's stub: what every student was given, never shown as shared."""
    return frozenset(line.strip() for line in stub_source(name).splitlines())


def lines_of(text: str, slices, given: frozenset[str]) -> list[str]:
    """The lines that the copied slices touch and the stub does not have, in order, at most SHOWN_LINES."""
    every, lines, seen = text.splitlines(), list[str](), set[int]()
    for start, end in zip(slices[0], slices[1]):
        for number in range(text.count("\n", 0, int(start)), text.count("\n", 0, int(end)) + 1):
            line = every[number] if number < len(every) else ""
            if number not in seen and line.strip() and line.strip() not in given and len(lines) < SHOWN_LINES:
                seen.add(number)
                lines.append(line)
    return lines


def pairs(dirs, threshold: float) -> list[Pair]:
    """Every pair of submissions, and each against the reference, sharing at least threshold of their code, closest first."""
    with tempfile.TemporaryDirectory(prefix="grader-similarity-") as tmp:
        stubs = write_stubs(Path(tmp) / "stubs")
        from copydetect import CodeFingerprint

        boilerplate = {
            name: np.array(sorted(CodeFingerprint(str(stubs / f"{name}.py"), NOISE, WINDOW, language="python").hashes)) for name in MODULES
        }
        folders = {shown(str(d)): modules_folder(Path(d)) for d in dirs}
        prints = {name: fingerprints(folder, boilerplate) for name, folder in folders.items()}
        reference = fingerprints(SOLUTIONS_DIR, boilerplate)
    found = [compare(a, prints[a], b, prints[b]) for a, b in itertools.combinations(prints, 2)]
    found += [compare(name, prints[name], REFERENCE, reference) for name in prints]
    return sorted((p for p in found if p.score >= threshold or p.exact), key=lambda p: (-p.score, p.first, p.second))


def text(found: list[Pair], threshold: float) -> str:
    """The pairs as the terminal shows them."""
    if not found:
        return f"No pair shares {threshold:.0%} of its code or more (stubs left out), and no module is an exact copy."
    lines = [f"{len(found)} pairs share {threshold:.0%} of their code or more, or an exact module (the stubs left out):"]
    for pair in found:
        exact = f"; identical: {', '.join(pair.exact)}" if pair.exact else ""
        lines += ["", f"{pair.score:5.0%}  {pair.first}  ~  {pair.second}{exact}"]
        for module, shared in pair.lines.items():
            lines += [f"       {module}:"] + [f"         | {line}" for line in shared]
    lines += ["", "Read the shared lines before concluding anything: short exercises have few ways to be right."]
    return "\n".join(lines)


def page(found: list[Pair], threshold: float) -> str:
    """The pairs as one self-contained HTML page, without script."""
    rows = []
    for pair in found:
        shared = "".join(
            f"<p><b>{html.escape(module)}</b></p><pre>{html.escape(chr(10).join(lines))}</pre>" for module, lines in pair.lines.items()
        )
        exact = html.escape(", ".join(pair.exact)) or "none"
        rows.append(
            f"<tr><td class='n'>{pair.score:.0%}</td><td>{html.escape(pair.first)}</td><td>{html.escape(pair.second)}</td>"
            f"<td>{exact}</td><td>{shared}</td></tr>"
        )
    body = "".join(rows) or "<tr><td colspan='5'>no pair above the threshold</td></tr>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Similarity</title><style>
body{{font:15px/1.4 system-ui,sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse}}
td,th{{padding:.3em .8em;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}}pre{{margin:0;font-size:13px}}
td.n{{text-align:right}}</style></head><body>
<h1>Similarity: pairs sharing {threshold:.0%} of their code or more</h1>
<p>copydetect's winnowing, the stubs as boilerplate. Evidence to read, never a penalty by itself.</p>
<table id="pairs"><tr><th>shared</th><th>submission</th><th>with</th><th>identical modules</th><th>shared lines</th></tr>{body}</table>
</body></html>
"""


def similarity(dirs, threshold: float = 0.5, html_file: Path | None = None) -> int:
    """Print the pairs sharing at least threshold of their code, and write them as HTML; 2 when the threshold or copydetect is wrong."""
    if not 0 < threshold <= 1:
        click.echo("--threshold is a share of the code, more than 0 and at most 1 (0.5 is half).", err=True)
        return 2
    try:
        import copydetect  # noqa: F401
    except ImportError:
        click.echo("The similarity report needs copydetect: pip install copydetect", err=True)
        return 2
    found = pairs(dirs, threshold)
    click.echo(text(found, threshold))
    if html_file is not None:
        Path(html_file).write_text(page(found, threshold), encoding="utf-8")
        click.echo(f"\nWrote {html_file}.")
    return 0
