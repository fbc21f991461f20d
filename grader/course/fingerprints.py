"""What the similarity report compares of a submission: its code as tokens, and the fingerprints of their runs.

Each module is read within bounds fixed before reading (MODULE_BYTES a module, STUDENT_BYTES a
submission, TOKENS of code kept), never through a link, and what was cut is said. Its tokens are
Python's own, made blind to what a copier changes for free: comments, spacing, line breaks and
indentation are dropped, every statement ends in ";", every name is N (an attribute after a dot
keeps its name: np.einsum is not np.matmul), every string S. A statement that is only a string (a
docstring) is text, not code, and is dropped token by token, wherever its lines are, so code moved
onto a docstring's line stays code. A fingerprint is the hash of K tokens in a row (MOSS's k-gram).
"""

import hashlib
import keyword
import os
import re
import stat
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.paths import MODULES
from grader.sandbox.private import READ_FLAGS

K = 32  # tokens in a fingerprint: two lines of code or so (`N = N . max ( N , N = - 1 , N = True ) ;` is 16)
MODULE_BYTES = 256 << 10  # read of one module: 60 times the reference's longest
STUDENT_BYTES = 512 << 10  # read of one submission's five modules together
TOKENS = 20_000  # tokens of code kept of one submission: 20 times the reference's
BASE = np.uint64(0x9E3779B97F4A7C15)  # the multiplier of the rolling hash (odd, so no bit is lost)


@dataclass
class Code:
    """A submission's code as the report compares it: its K-grams' hashes and spans, each token's module and line."""

    hashes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))  # each K-gram's hash
    # each K-gram's first token
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    # one past its last token
    ends: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    # each token's line in its module
    lines: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    modules: list[str] = field(default_factory=list)  # the modules with code, in order
    # the first token of each of them
    firsts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    # module -> its text as read (within the bounds)
    texts: dict[str, str] = field(default_factory=dict)
    digests: dict[str, bytes] = field(default_factory=dict)  # module -> sha256 of its bytes as read
    cut: list[str] = field(default_factory=list)  # what the bounds left out, in words

    @property
    def tokens(self) -> int:
        return len(self.lines)

    def module_of(self, position: int) -> str:
        """The module of the token at position."""
        return self.modules[int(np.searchsorted(self.firsts, position, side="right")) - 1]


def modules_folder(folder: Path) -> Path:
    """Where a submission's modules are: the folder, or its exercises/ (nbgrader's layout), never through a link."""
    inner = Path(folder) / "exercises"
    if (
        not os.path.lexists(Path(folder) / "scores.py")
        and inner.is_dir()
        and not inner.is_symlink()
    ):
        return inner
    return Path(folder)


def read_bounded(path: Path, limit: int) -> tuple[bytes, int] | None:
    """(at most limit bytes of a regular file, its whole size), without following a link; None for anything else."""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        opened = os.fstat(file.fileno())
        if not stat.S_ISREG(opened.st_mode):
            return None
        return file.read(max(limit, 0)), opened.st_size


def read(folder: Path) -> Code:
    """A submission's code: each module that is a regular file, read within the bounds; what was cut said in Code.cut."""
    code = Code()
    folder, left = modules_folder(folder), STUDENT_BYTES
    if Path(folder).is_symlink():
        code.cut.append("the folder is a link: not read")
        return code
    for name in MODULES:
        found = read_bounded(folder / f"{name}.py", min(MODULE_BYTES, left))
        if found is None:
            continue
        data, size = found
        left -= len(data)
        if len(data) < size:
            code.cut.append(f"{name}.py: {size:,} bytes, its first {len(data):,} compared")
        code.digests[name] = hashlib.sha256(data).digest()
        code.texts[name] = data.decode("utf-8", "surrogateescape")
    return fingerprint(code)


def fingerprint(code: Code) -> Code:
    """Fill in the tokens and K-grams of code.texts, module by module (no K-gram spans two), at most TOKENS in all."""
    ids: list[int] = []
    lines: list[int] = []
    hashes, starts, ends = [], [], []
    for name, text in code.texts.items():
        room = TOKENS - len(ids)
        words = normalised(text, room + 1)
        if len(words) > room:
            past = f"past its first {room:,} " if room else ""
            code.cut.append(
                f"{name}.py: its tokens of code {past}not compared (at most {TOKENS:,} a submission)"
            )
            words = words[:room]
        if not words:
            continue
        first = len(ids)
        code.modules.append(name)
        ids.extend(zlib.crc32(word.encode("utf-8", "surrogateescape")) for word, _ in words)
        lines.extend(line for _, line in words)
        hashes.append(kgrams(np.array(ids[first:], dtype=np.uint64)))
        starts.append(first + np.arange(len(hashes[-1]), dtype=np.int32))
        ends.append(np.minimum(starts[-1] + K, len(ids)).astype(np.int32))
    if hashes:
        code.hashes, code.starts, code.ends = (
            np.concatenate(hashes),
            np.concatenate(starts),
            np.concatenate(ends),
        )
    code.lines = np.array(lines, np.int32)
    code.firsts = np.array([s[0] for s in starts], np.int32)
    return code


def kgrams(ids: np.ndarray) -> np.ndarray:
    """The hash of every K tokens in a row (a module shorter than K is one fingerprint of all of it)."""
    width = min(K, len(ids))
    # wraps modulo 2**64, as a rolling hash does
    powers = BASE ** np.arange(width - 1, -1, -1, dtype=np.uint64)
    windows = np.lib.stride_tricks.sliding_window_view(ids, width)
    return (windows * powers).sum(axis=1, dtype=np.uint64)


# Python's tokens by one regular expression, in the order they are tried; anything else is one character on its own.
LEXEME = re.compile(
    r"""(?P<comment>\#[^\r\n]*)
    |(?P<string>(?:[rRbBuUfF]{1,2})?(?:'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)|\"\"\"(?:[^"\\]|\\.|"(?!""))*(?:\"\"\"|\Z)
                                   |'(?:[^'\\\r\n]|\\.)*'?|"(?:[^"\\\r\n]|\\.)*"?))
    |(?P<name>[^\W\d]\w*)
    |(?P<number>0[xXoObB]\w+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)
    |(?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|\.\.\.|[-+*/%&|^@<>=!]=|[-+*/%&|^~@<>=.,:;()\[\]{}])
    |(?P<newline>\r\n|\n|\r)
    |(?P<space>[ \t\f]+|\\\r?\n)
    |(?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)
OPEN, CLOSE = frozenset("([{"), frozenset(")]}")


def lexemes(text: str, limit: int | None = None) -> list[tuple[str, str, int, int]]:
    """The text's tokens as (kind, text, line, column): kind comment, string, name, number, op, other, or end for a newline
    that ends a statement (outside brackets); at most limit of them, comments aside. Any text gives tokens: broken code is
    read as far as it goes, never refused."""
    found, line, start, depth, code = [], 1, 0, 0, 0
    for seen, match in enumerate(LEXEME.finditer(text)):
        if limit is not None and (
            code >= limit or seen >= 4 * limit
        ):  # spaces and comments are bounded too
            break
        kind, string, at = match.lastgroup, match.group(), match.start()
        if kind == "newline" or kind == "space" and "\n" in string:
            if kind == "newline" and depth == 0:
                found.append(("end", string, line, at - start))
            line, start = line + 1, match.end()
            continue
        if kind == "space":
            continue
        if kind == "op":
            depth = depth + 1 if string in OPEN else max(depth - 1, 0) if string in CLOSE else depth
        found.append((kind, string, line, at - start))  # type: ignore[arg-type]
        code += kind != "comment"
        if kind == "string" and "\n" in string:
            line, start = line + string.count("\n"), at + string.rindex("\n") + 1
    return found


def normalised(text: str, limit: int | None = None) -> list[tuple[str, int]]:
    """The text's tokens of code as (word, line), blind to names, comments, spacing and docstrings (see the module's docstring),
    from its first limit tokens."""
    words: list[tuple[str, int]] = []
    for kind, string, line, _ in lexemes(text, limit):
        if kind == "comment":
            continue
        if kind == "end" or string == ";":
            word = "NEWLINE"
        elif kind == "name":
            word = string if keyword.iskeyword(string) or (words and words[-1][0] == ".") else "N"
        elif kind == "string":
            word = "S"
        else:
            word = string
        words.append((word, line))
    return statements(words)


def statements(words: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The words with every string-only statement dropped, each statement ended by one ";" (none after a ":")."""
    kept: list[tuple[str, int]] = []
    at = 0
    while at < len(words):
        word, line = words[at]
        if word == "S" and (not kept or kept[-1][0] in (";", ":")):
            end = at
            while end < len(words) and words[end][0] == "S":
                end += 1
            if end == len(words) or words[end][0] == "NEWLINE":
                at = end  # a docstring, or any statement that is only a string: text
                continue
        if word == "NEWLINE":
            if kept and kept[-1][0] not in (";", ":"):
                kept.append((";", line))
        else:
            kept.append((word, line))
        at += 1
    return kept
