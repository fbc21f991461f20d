"""The lines two submissions share, side by side: where each run of common fingerprints lies in each one's modules.

Only the listed pairs get here, each submission read again within the same bounds. A block is a run
of fingerprints found in both in the same order (a copy with its functions reordered gives one block
a function); only the lines that hold a shared token are shown, so a docstring or a comment between
them is not. In the anonymised report, comments are cut from the lines shown.
"""

from dataclasses import dataclass

import numpy as np

from grader.course import fingerprints

BLOCKS = 8  # blocks shown per pair, the largest
LINES = 30  # lines shown per side of a block
WIDTH = 160  # characters shown of a line


@dataclass
class Side:
    """One submission's part of a block: its module and the lines shown, by number."""

    module: str
    lines: list[tuple[int, str]]
    more: int = 0  # lines of the block not shown


@dataclass
class Block:
    """A run of code two submissions share: how many tokens, and each one's lines."""

    tokens: int
    first: Side
    second: Side


def runs(a_starts: np.ndarray, b_starts: np.ndarray) -> list[tuple[int, int]]:
    """Runs of matched K-grams that start one token after the other in both: (first, last), as indices into the matches."""
    if not len(a_starts):
        return []
    # a module's end breaks a run too
    broken = np.flatnonzero((np.diff(a_starts) != 1) | (np.diff(b_starts) != 1)) + 1
    heads = np.concatenate(([0], broken))
    return list(zip(heads.tolist(), np.concatenate((broken - 1, [len(a_starts) - 1])).tolist()))


def matches(
    a: fingerprints.Code, b: fingerprints.Code, left_out: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(K-grams of a, the first K-gram of b with the same hash) for every K-gram of a that b holds and no one left out."""
    usable = np.flatnonzero(~np.isin(b.hashes, left_out))
    hashes, first = np.unique(b.hashes[usable], return_index=True)
    wanted = np.flatnonzero(np.isin(a.hashes, hashes) & ~np.isin(a.hashes, left_out))
    return wanted, usable[first[np.searchsorted(hashes, a.hashes[wanted])]]


def comments(text: str) -> dict[int, int]:
    """Line -> the column its comment starts at."""
    return {
        line: column for kind, _, line, column in fingerprints.lexemes(text) if kind == "comment"
    }


def side(code: fingerprints.Code, start: int, end: int, anonymous: bool) -> Side:
    """The lines of code holding a token of [start, end): the module's, numbered, comments cut when anonymous."""
    module = code.module_of(start)
    numbers = sorted(set(code.lines[start:end].tolist()))
    text = code.texts[module].splitlines()
    cuts = comments(code.texts[module]) if anonymous else {}
    lines = [
        (n, text[n - 1][: cuts.get(n)][:WIDTH].rstrip() if n <= len(text) else "")
        for n in numbers[:LINES]
    ]
    return Side(f"{module}.py", lines, max(len(numbers) - LINES, 0))


def blocks(
    a: fingerprints.Code, b: fingerprints.Code, left_out: np.ndarray, anonymous: bool
) -> tuple[list[Block], int, list[str]]:
    """(the largest BLOCKS blocks a and b share, in a's order; how many of a's lines hold shared code; a's modules that do)."""
    in_a, in_b = matches(a, b, left_out)
    spans: list[list[int]] = []  # [start, end] in a, [start, end] in b, of each run in a's order
    for first, last in runs(a.starts[in_a], b.starts[in_b]):
        start, end = int(a.starts[in_a[first]]), int(a.ends[in_a[last]])
        b_start, b_end = int(b.starts[in_b[first]]), int(b.ends[in_b[last]])
        before = spans[-1] if spans else None
        if (
            before
            and start <= before[1]
            and before[2] <= b_start <= before[3]
            and a.module_of(start) == a.module_of(before[0])
        ):
            # overlaps the run before in both: one block
            before[1], before[3] = (max(before[1], end), max(before[3], b_end))
        else:
            spans.append([start, end, b_start, b_end])
    found = [(end - start, start, end, b_start, b_end) for start, end, b_start, b_end in spans]
    every = {(a.module_of(s), n) for _, s, e, _, _ in found for n in a.lines[s:e].tolist()}
    largest = sorted(sorted(found, key=lambda f: -f[0])[:BLOCKS], key=lambda f: f[1])
    shown = [
        Block(t, side(a, s, e, anonymous), side(b, bs, be, anonymous))
        for t, s, e, bs, be in largest
    ]
    modules = sorted({module for module, _ in every}, key=fingerprints.MODULES.index)
    return shown, len(every), [f"{m}.py" for m in modules]


def details(
    pairs: list,
    stubs: np.ndarray,
    reference: np.ndarray,
    idioms: np.ndarray,
    anonymous: bool = False,
) -> None:
    """Give each listed pair its blocks of shared lines, its count of shared lines and the modules they are in."""
    read: dict[str, fingerprints.Code] = {}
    for pair in pairs:
        for submission in (pair.first, pair.second):  # each read once, however many pairs it is in
            if str(submission.folder) not in read:
                read[str(submission.folder)] = fingerprints.read(submission.folder)
        a, b = read[str(pair.first.folder)], read[str(pair.second.folder)]
        left_out = (
            np.union1d(stubs, idioms)
            if pair.of_reference
            else np.union1d(np.union1d(stubs, idioms), reference)
        )
        pair.blocks, pair.lines, modules = blocks(a, b, left_out, anonymous)
        # a copy of the reference names the reference's modules it holds
        pair.modules = pair.modules or modules
