"""Near-copies among a class's submissions and of the published reference, ranked by how much code they share.

Each submission's code is fingerprinted (fingerprints.py: K tokens in a row, blind to names,
comments, spacing and docstrings). What every student was given (the stubs) counts for no one.
Between two submissions, neither the reference's fingerprints count (the repository is public: its
copies are listed against it, once each) nor those held by more than COMMON_SHARE of the class (an
idiom, as MOSS and JPlag ignore them). Only submissions that share a fingerprint are ever paired:
an index from each fingerprint to its holders gives the pairs, so the work grows with what the class
shares, not with its square. Pairs are counted by the fingerprints they share; the closest are
then measured in tokens of code each holds of the other, and ranked by the smaller of the two: a
short piece is never "100%" of anything, and code added around a copy does not hide it. Against the
reference, all fingerprints but the stubs' count, and a submission is listed for the reference's
modules it holds nearly whole (REFERENCE_MODULE), renamed or not: the tokens of those modules rank it.
"""

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.course import fingerprints
from grader.course.shared_lines import details
from grader.course.stubs import stub_source
from grader.paths import MODULES, SOLUTIONS_DIR

MIN_TOKENS = 300  # the least a pair must share to be listed: twenty lines of code or so beyond the reference and idioms
TOP = 50  # pairs listed at most, closest first
REFERENCE_MODULE = 0.9  # a module is the reference's when a submission holds this share of the reference's own code in it
REFERENCE = "solutions/"  # the reference's id in the pairs
COMMON_SHARE = 0.05  # a fingerprint held by more than this share of the class (and more than COMMON) is an idiom, no evidence
COMMON = 10
CHUNK = 1_000_000  # pairs of holders counted at once, to bound the memory the counting takes
MEASURED = 4  # the pairs measured in tokens: this many times the pairs to list, by the fingerprints they share


@dataclass
class Submission:
    """A student's submission as the report names it: their id and name, its folder (None when not found) and how it is shown."""

    id: str
    name: str = ""
    folder: Path | None = None
    shown: str = ""


@dataclass
class Held:
    """What the index keeps of a submission: its own fingerprints' first spans, its size, and what it shares with the reference."""

    hashes: np.ndarray  # sorted unique hashes, the stubs' and the reference's left out
    starts: np.ndarray
    ends: np.ndarray
    tokens: int
    own: int  # tokens of code that are not the stubs'
    of_reference: int  # of those, tokens the reference holds
    reference_held: int  # tokens of the reference's own code that this one holds
    # the reference's modules this one holds nearly whole (REFERENCE_MODULE) -> their tokens
    reference_modules: dict[str, int]
    digests: dict[str, bytes]
    cut: list[str]


@dataclass
class Pair:
    """Two submissions (or one and the reference), the tokens of code each holds of the other, and the shared lines."""

    first: Submission
    second: Submission
    tokens: int  # the smaller of the two: what both hold
    held: tuple[int, int]  # tokens of each one's own code that the other holds
    own: tuple[int, int]  # each one's own tokens
    # modules the same byte for byte (neither the stub nor the reference)
    identical: list[str] = field(default_factory=list)
    # the shared lines side by side (shared_lines.py), for the listed pairs
    blocks: list = field(default_factory=list)
    lines: int = 0  # lines of the first's code that hold shared tokens
    modules: list[str] = field(default_factory=list)  # the first's modules that hold shared code

    @property
    def of_reference(self) -> bool:
        return self.second.id == REFERENCE

    def shares(self) -> tuple[float, float]:
        first, second = (held / own if own else 0.0 for held, own in zip(self.held, self.own))
        return first, second


@dataclass
class Found:
    """The similarity of a class: the pairs listed, and what the reader must know of the rest."""

    pairs: list[Pair]
    compared: int  # submissions read
    not_found: list[Submission]  # rows whose folder is not there: named, never silently left out
    cut: dict[str, list[str]]  # submission id -> what the bounds left out
    candidates: int  # pairs sharing at least one uncommon fingerprint
    measured: int  # of those, the pairs sharing the most fingerprints, measured in tokens
    above: int  # pairs measured that share at least the least listed, and copies of the reference
    common: int  # the idiom threshold used


@dataclass
class Given:
    """What no pair counts: the stubs' fingerprints and bytes; the reference's, which only its own pairs count."""

    stubs: np.ndarray  # sorted hashes
    reference: fingerprints.Code
    hashes: np.ndarray  # the reference's sorted hashes, the stubs' left out
    mine: np.ndarray  # a mask of the reference's own tokens (not the stubs')
    stub_digests: set[bytes]


def covered(starts: np.ndarray, ends: np.ndarray, size: int) -> np.ndarray:
    """A mask of the size tokens that the spans [start, end) cover."""
    steps = np.zeros(size + 1, np.int32)
    np.add.at(steps, starts, 1)
    np.add.at(steps, ends, -1)
    return np.cumsum(steps[:-1]) > 0


@functools.cache
def given() -> Given:
    """The stubs and the reference, fingerprinted as the submissions are (once a process: neither changes)."""
    stubs = fingerprints.fingerprint(
        fingerprints.Code(texts={name: stub_source(name) for name in MODULES})
    )
    stub_hashes = np.unique(stubs.hashes)
    reference = fingerprints.read(SOLUTIONS_DIR)
    stub = np.isin(reference.hashes, stub_hashes)
    mine = ~covered(reference.starts[stub], reference.ends[stub], reference.tokens)
    digests = {hashlib.sha256(stub_source(name).encode("utf-8")).digest() for name in MODULES}
    return Given(
        stub_hashes,
        reference,
        np.setdiff1d(np.unique(reference.hashes), stub_hashes),
        mine,
        digests,
    )


def hold(code: fingerprints.Code, known: Given) -> Held:
    """What the index keeps of a submission's code."""
    stub = np.isin(code.hashes, known.stubs)
    mine = ~covered(code.starts[stub], code.ends[stub], code.tokens)
    in_reference = np.isin(code.hashes, known.hashes)
    theirs = covered(code.starts[in_reference], code.ends[in_reference], code.tokens) & mine
    reference = known.reference
    in_mine = np.isin(reference.hashes, code.hashes)
    of_theirs = (
        covered(reference.starts[in_mine], reference.ends[in_mine], reference.tokens) & known.mine
    )
    ends = [*reference.firsts[1:], reference.tokens]
    per_module = {
        m: (int(of_theirs[a:b].sum()), int(known.mine[a:b].sum()))
        for m, a, b in zip(reference.modules, reference.firsts, ends)
    }
    whole = {
        m: held for m, (held, own) in per_module.items() if own and held >= REFERENCE_MODULE * own
    }
    keep = ~stub & ~in_reference
    hashes, first = np.unique(code.hashes[keep], return_index=True)
    # fmt: skip
    return Held(
        hashes,
        code.starts[keep][first],
        code.ends[keep][first],
        code.tokens,
        int(mine.sum()),
        int(theirs.sum()),
        int(of_theirs.sum()),
        whole,
        code.digests,
        code.cut,
    )


def counted(held: list[Held], common: int) -> tuple[np.ndarray, np.ndarray]:
    """(how many uncommon fingerprints each pair shares, in an n * n table by first * n + second, first < second; the idioms' hashes).

    The table takes 2 bytes a pair (18 MiB for 3,000 submissions); a count never passes TOKENS, so 16 bits hold it.
    """
    n = len(held)
    shared = np.zeros(n * n, np.uint16)
    if not sum(len(h.hashes) for h in held):
        return shared, np.zeros(0, np.uint64)
    students = np.repeat(np.arange(n, dtype=np.int64), [len(h.hashes) for h in held])
    hashes = np.concatenate([h.hashes for h in held])
    order = np.lexsort((students, hashes))
    hashes, students = hashes[order], students[order]
    bounds = np.flatnonzero(np.concatenate(([True], hashes[1:] != hashes[:-1], [True])))
    sizes = np.diff(bounds)
    idioms = hashes[bounds[:-1][sizes > common]]
    for size in range(
        2, common + 1
    ):  # every pair of a fingerprint's holders, for each count of holders in turn
        heads = bounds[:-1][sizes == size]
        left, right = np.triu_indices(size, 1)
        step = max(CHUNK // len(left), 1)
        for at in range(0, len(heads), step):
            some = heads[at : at + step, None]
            np.add.at(shared, students[some + left].ravel() * n + students[some + right].ravel(), 1)
    return shared, idioms


def measure(a: Held, b: Held, idioms: np.ndarray) -> tuple[int, int]:
    """Tokens of a's code that b holds and of b's that a holds, by their shared fingerprints that are no idiom."""
    _, in_a, in_b = np.intersect1d(a.hashes, b.hashes, assume_unique=True, return_indices=True)
    keep = ~np.isin(a.hashes[in_a], idioms)
    in_a, in_b = in_a[keep], in_b[keep]
    return int(covered(a.starts[in_a], a.ends[in_a], a.tokens).sum()), int(
        covered(b.starts[in_b], b.ends[in_b], b.tokens).sum()
    )


def similar(
    submissions: list[Submission], least: int = MIN_TOKENS, top: int = TOP, anonymous: bool = False
) -> Found:
    """The pairs sharing at least least tokens (and the copies of the reference), closest first, at most top of them."""
    known = given()
    present = [s for s in submissions if s.folder is not None]
    held = [hold(fingerprints.read(s.folder), known) for s in present]  # type: ignore[arg-type]
    common = max(COMMON, round(COMMON_SHARE * len(present)))
    shared, idioms = counted(held, common)
    most = min(MEASURED * top, len(shared))
    closest = (
        np.argpartition(shared, len(shared) - most)[len(shared) - most :]
        if most
        else np.zeros(0, np.int64)
    )
    closest = closest[shared[closest] > 0]
    pairs = []
    for a, b in zip(
        (closest // max(len(held), 1)).tolist(), (closest % max(len(held), 1)).tolist()
    ):
        first, second = measure(held[a], held[b], idioms)
        if min(first, second) >= least:
            pairs.append(
                Pair(
                    present[a],
                    present[b],
                    min(first, second),
                    (first, second),
                    (held[a].own, held[b].own),
                )
            )
    reference = Submission(REFERENCE, "the published reference", SOLUTIONS_DIR, REFERENCE)
    reference_own = int(known.mine.sum())
    for s, h in zip(present, held):
        both = sum(h.reference_modules.values())
        if both >= least:
            modules = [f"{m}.py" for m in h.reference_modules]
            pairs.append(
                Pair(
                    s,
                    reference,
                    both,
                    (h.of_reference, h.reference_held),
                    (h.own, reference_own),
                    modules=modules,
                )
            )
    listed = sorted(pairs, key=lambda p: (-p.tokens, p.first.id, p.second.id))[:top]
    # ids may repeat
    digests = {id(s): h.digests for s, h in zip(present, held)} | {
        id(reference): known.reference.digests
    }
    for pair in listed:
        mine, theirs = digests[id(pair.first)], digests[id(pair.second)]
        left_out = known.stub_digests | (
            set() if pair.of_reference else set(known.reference.digests.values())
        )
        pair.identical = [
            f"{m}.py"
            for m in MODULES
            if m in mine and mine[m] == theirs.get(m) and mine[m] not in left_out
        ]
    details(listed, known.stubs, known.hashes, idioms, anonymous)
    cut = {s.id: h.cut for s, h in zip(present, held) if h.cut}
    return Found(
        listed,
        len(present),
        [s for s in submissions if s.folder is None],
        cut,
        int(np.count_nonzero(shared)),
        len(closest),
        len(pairs),
        common,
    )
