"""A realistic class of submissions, generated from a seed: what the similarity report is measured on.

Right work in many styles (styles.py), real mistakes, unfinished work (stubs left), broken work (a
syntax error, a bad indent, a missing library, bytes that are not UTF-8), the untouched stubs, five
planted groups of copies (four of three and one of four: renamed variables, functions reordered,
comments changed, whitespace, a line edited) and three copies of the published reference, each with
small edits. The planted pairs are the 18 pairs within the groups and the three copies against the
reference: 21. Shared by tests/course/test_similarity.py and bench/bench_similarity.py.
"""

import ast
import io
import keyword
import random
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from styles import HELPERS, MISTAKES, WRITERS, Style

from grader.course.stubs import stub_source
from grader.exercises import EXERCISES
from grader.paths import MODULES, SOLUTIONS_DIR

GROUPS = (3, 3, 3, 3, 4)  # the planted groups of copies, by size
REFERENCE_COPIES = 3
REFERENCE = "solutions/"  # the reference's id in the similarity report
KINDS = {"right": 0.58, "mistake": 0.2, "unfinished": 0.12, "broken": 0.05, "stubs": 0.05}
FUNCTIONS = {e.name: list(e.functions) for e in EXERCISES}
OTHER_NAMES = [
    "tmp",
    "val",
    "res",
    "arr",
    "a1",
    "b1",
    "out2",
    "thing",
    "buf",
    "acc",
    "cur",
    "part",
    "piece",
    "item",
]


@dataclass
class Class:
    """A generated class: each student's folder, what each one is, and the copies planted."""

    folders: dict[str, Path]
    kinds: dict[str, str]
    groups: list[list[str]] = field(default_factory=list)
    reference_copies: list[str] = field(default_factory=list)

    def planted(self) -> set[frozenset]:
        """The planted pairs: two of a group, or a copy of the reference and the reference."""
        pairs = {
            frozenset((a, b))
            for group in self.groups
            for i, a in enumerate(group)
            for b in group[i + 1 :]
        }
        return pairs | {frozenset((copy, REFERENCE)) for copy in self.reference_copies}


def function_text(st: Style, name: str, params: str, doc: str, body: list[str], unit: str) -> str:
    """A function as the student wrote it: the def line, the docstring kept or not, the body in their indent and comments."""
    lines = [f"def {name}({params}):"]
    keep = st.rng.random()
    if keep < 0.7:
        lines.append(doc)
    elif keep < 0.8:
        lines.append(
            f'{unit}"""{st.rng.choice(["My", "The", "Compute the"])} {name.replace("_", " ")}."""'
        )
    for line in st.guard([p.strip() for p in params.split(",")]) + body:
        depth = (len(line) - len(line.lstrip(" "))) // 4
        if st.comments and st.rng.random() < st.comments / 3:
            lines.append(
                unit * (depth + 1)
                + "# "
                + st.rng.choice(["step", "then", "now", "next", "here"])
                + " "
                + name.split("_")[-1]
            )
        lines.append(st.comment(unit * (depth + 1) + line.lstrip(" ")))
    return "\n".join(lines) + "\n"


def module_text(st: Style, module: str, done: set[str], mistakes: dict[str, str]) -> str:
    """A module: the stub's header and each function written in the student's style (or left a stub, when not done)."""
    stub = stub_source(module)
    tree = ast.parse(stub)
    lines = stub.splitlines()
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    header = "\n".join(lines[: functions[0].lineno - 1]).rstrip() + "\n"
    if st.rng.random() < 0.15:
        header = header[header.index('"""', 3) + 3 :].lstrip("\n")  # the module's docstring deleted
    unit = "  " if st.rng.random() < 0.05 else "    "
    parts = []
    for node in functions:
        source = "\n".join(lines[node.lineno - 1 : node.end_lineno]) + "\n"
        if node.name not in done:
            parts.append(source)
            continue
        doc = "\n".join(lines[node.body[0].lineno - 1 : node.body[0].end_lineno]).replace(
            "    ", unit, 1
        )
        params = ast.unparse(node.args)
        parts.append(
            function_text(
                st,
                node.name,
                params,
                doc,
                WRITERS[node.name](st, mistakes.get(node.name, "")),
                unit,
            )
        )
    if st.rng.random() < 0.15:
        st.rng.shuffle(parts)
    body = ("\n\n\n" if st.rng.random() < 0.8 else "\n\n").join(parts)
    helpers = [
        ("\n".join(helper) + "\n").replace("    ", unit)
        for use, helper in HELPERS.items()
        if use in body
    ]
    if "math." in body + "".join(helpers) and "import math" not in header:
        header = header.replace("import numpy as np", "import math\n\nimport numpy as np")
    return header + "\n\n" + "\n\n".join([*helpers, body]).rstrip() + "\n"


@dataclass(frozen=True)
class Work:
    """What a student did: the functions written, the mistake made in some of them (function -> its name in
    tests/mutants/wrong/), and the module broken, if one is."""

    done: frozenset[str]
    mistakes: dict[str, str]
    broken: str = ""


def student(rng: random.Random, kind: str, least: int = 1) -> dict[str, bytes]:
    """A student's five modules, as bytes, of the given kind (right, mistake, unfinished, broken, stubs); unfinished work
    has at least least functions done."""
    return work(rng, kind, least)[0]


def work(rng: random.Random, kind: str, least: int = 1) -> tuple[dict[str, bytes], Work]:
    """A student's five modules, as student() writes them, and what the student did in them."""
    st = Style.draw(rng)
    every = [f for e in EXERCISES for f in e.functions]
    done = set(every)
    if kind == "unfinished":
        done = set(every[: rng.randrange(least, len(every) - 1)])
    if kind == "stubs":
        done = set()
    mistakes = {}
    if kind == "mistake":
        for function in rng.sample(every, rng.choice([1, 1, 1, 2])):
            mistakes[function] = rng.choice(MISTAKES[function])
    modules = {m: module_text(st, m, done, mistakes).encode("utf-8") for m in MODULES}
    module = ""
    if kind == "broken":
        module = rng.choice(MODULES)
        modules[module] = broken(rng, modules[module])
    return modules, Work(frozenset(done), mistakes, module)


def broken(rng: random.Random, text: bytes) -> bytes:
    """The module as a student breaks it: a colon lost, a bad indent, a library they do not have, a comment in Latin-1."""
    lines = text.split(b"\n")
    at = next((n for n, line in enumerate(lines) if line.startswith(b"def ")), 0)
    how = rng.choice(["colon", "indent", "import", "latin1", "conflict"])
    if how == "colon":
        lines[at] = lines[at].rstrip(b":")
    elif how == "indent":
        lines.append(b"  x = 1")  # after a body indented by four: matches no outer level
    elif how == "import":
        lines.insert(0, b"import torch")
    elif how == "latin1":
        lines.insert(at, "# r\u00e9sum\u00e9 of the lecture".encode("latin-1"))
    else:
        lines[at:at] = [b"<<<<<<< HEAD", b"=======", b">>>>>>> mine"]
    return b"\n".join(lines)


def renamed(rng: random.Random, text: str) -> str:
    """The text with each local name of its functions renamed throughout (names after a dot, and parameters, left as they are)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    params = {
        a.arg
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for a in node.args.args
    }
    stored = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    } - params
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | params
    mapping = {}
    for name in sorted(stored):
        options = [f"{name}_", f"my_{name}", f"{name}2", name.upper(), rng.choice(OTHER_NAMES)]
        new = next(
            (
                o
                for o in rng.sample(options, len(options))
                if o not in taken and not keyword.iskeyword(o)
            ),
            f"{name}_x",
        )
        mapping[name] = new
        taken.add(new)
    lines = text.splitlines(keepends=True)
    changes, previous = [], None
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME and token.string in mapping and previous != ".":
            changes.append(token)
        previous = token.string if token.type != tokenize.NL else previous
    for token in reversed(changes):
        row, col = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:col] + mapping[token.string] + line[col + len(token.string) :]
    return "".join(lines)


def reordered(rng: random.Random, text: str) -> str:
    """The text with its top-level functions in another order."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines()
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if len(functions) < 2:
        return text
    head = lines[: functions[0].lineno - 1]
    pieces = ["\n".join(lines[f.lineno - 1 : f.end_lineno]) for f in functions]
    rng.shuffle(pieces)
    return "\n".join(head).rstrip() + "\n\n\n" + "\n\n\n".join(pieces) + "\n"


def recommented(rng: random.Random, text: str) -> str:
    """The text with every comment deleted or said in other words."""
    out = []
    for line in text.splitlines():
        code, hash_, _ = line.partition("  # ")
        if hash_ and '"' not in code and "'" not in code:
            line = (
                code
                if rng.random() < 0.5
                else f"{code}  # {rng.choice(['ok', 'done', 'see notes', 'shape check'])}"
            )
        elif line.lstrip().startswith("# "):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def respaced(rng: random.Random, text: str) -> str:
    """The text with its blank lines and the spaces around its operators changed."""
    text = text.replace("\n\n\n", "\n\n") if rng.random() < 0.5 else text.replace("\n\n", "\n\n\n")
    for old, new in ((" @ ", "@"), (" * ", "*"), (", ", ","), (" - ", "-")):
        if rng.random() < 0.5:
            text = (
                "\n".join(
                    line if '"' in line or "'" in line else line.replace(old, new)
                    for line in text.splitlines()
                )
                + "\n"
            )
    return text


EDITS = (
    ("np.sqrt(", "np.sqrt(1.0 * "),
    ("keepdims=True", "keepdims=1"),
    ("-np.inf", "-float('inf')"),
    ("lr * ", "float(lr) * "),
)


def edited(rng: random.Random, text: str) -> str:
    """The text with one small change of a copier's, which keeps the code right."""
    for old, new in rng.sample(EDITS, len(EDITS)):
        if old in text:
            return text.replace(old, new, 1)
    return text


def disguised(rng: random.Random, modules: dict[str, bytes]) -> dict[str, bytes]:
    """A copy of the modules, with three to five of a copier's disguises applied to each module that is text."""
    ways = [renamed, reordered, recommented, respaced, edited]
    chosen = [renamed, recommented] + rng.sample(ways[2:], rng.randrange(1, 4))
    out = {}
    for module, data in modules.items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            out[module] = data
            continue
        for way in chosen:
            text = way(rng, text)
        out[module] = text.encode("utf-8")
    return out


def make_class(root: Path, size: int, seed: int = 0) -> Class:
    """A class of size students in root/s0001 ... (five modules each), its planted copies recorded."""
    rng = random.Random(seed)
    made: dict[str, dict[str, bytes]] = {}
    kinds: dict[str, str] = {}
    ids = [f"s{n:04d}" for n in range(1, size + 1)]
    planted = rng.sample(ids, sum(GROUPS) + REFERENCE_COPIES)
    groups, at = [], 0
    for group_size in GROUPS:
        groups.append(sorted(planted[at : at + group_size]))
        at += group_size
    reference_copies = sorted(planted[at:])
    reference = {m: (SOLUTIONS_DIR / f"{m}.py").read_bytes() for m in MODULES}
    for number, group in enumerate(groups):
        # worth copying
        original = student(
            rng, "right" if number < 3 else "mistake" if number == 3 else "unfinished", least=8
        )
        made[group[0]], kinds[group[0]] = original, "copied"
        for copier in group[1:]:
            made[copier], kinds[copier] = disguised(rng, original), "copy"
    for copier in reference_copies:
        made[copier], kinds[copier] = disguised(rng, reference), "reference copy"
    for sid in ids:
        if sid not in made:
            kinds[sid] = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
            made[sid] = student(rng, kinds[sid])
    folders = {}
    for sid in ids:
        folders[sid] = root / sid
        folders[sid].mkdir(parents=True)
        for module, data in made[sid].items():
            (folders[sid] / f"{module}.py").write_bytes(data)
    return Class(folders, kinds, groups, reference_copies)
