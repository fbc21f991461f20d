"""grader report --similarity / --pairs: near-copies ranked by the code they share; the reference's copies named as such.

The attacks of the similarity report, each rebuilt: the reference with its code moved onto the docstrings'
lines, a folder whose name is not UTF-8, a module of megabytes; and generated hostile names and modules.
"""

import ast
import csv
import os
import random
import re
import shutil
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest
from classroom import REFERENCE, disguised, make_class, student
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from treememory import peak_tree

from grader import outlet
from grader.cli import main
from grader.course import fingerprints
from grader.course.rows import COLUMNS, filed, shown
from grader.course.similarity import MIN_TOKENS, TOP, Submission, similar
from grader.course.stubs import write_stubs
from grader.paths import MODULES, SOLUTIONS_DIR

LISTED = re.compile(
    r"^ +(\d+) +(\d+) +(\d+) +(\d+)% (\d+)%  (.+?)  ~  (.+?)  +(\S.*)?$", flags=re.M
)


def write(folder: Path, modules: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True)
    for module, data in modules.items():
        (folder / f"{module}.py").write_bytes(data)
    return folder


def reference() -> dict[str, bytes]:
    return {m: (SOLUTIONS_DIR / f"{m}.py").read_bytes() for m in MODULES}


def batch_csv(path: Path, folders: list[Path]) -> Path:
    """A CSV as `grader batch` writes it, for these folders (every folder cell as batch files it)."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for folder in folders:
            name = os.fsdecode(folder.name) if isinstance(folder.name, bytes) else folder.name
            writer.writerow(
                {
                    "student": shown(name),
                    "folder": filed(folder),
                    "status": "graded",
                    "total": "50.0",
                    "failed checks": "",
                }
            )
    return path


def listed(output: str) -> dict[tuple[str, str], tuple[int, str]]:
    """The terminal's pairs: (student, other) -> (tokens, where)."""
    return {
        (a, b.split(" (")[0]): (int(tokens), where or "")
        for _, tokens, _, _, _, a, b, where in LISTED.findall(output)
    }


class Page(HTMLParser):
    """The pairs table's rows, the text of the <pre> blocks, and whether anything on the page would run."""

    def __init__(self):
        super().__init__()
        self.rows, self.pre, self.in_pre, self.in_table, self.live = [], [], False, False, False

    def handle_starttag(self, tag, attrs):
        self.live |= tag in ("script", "img", "iframe") or any(
            name.startswith("on") for name, _ in attrs
        )
        self.in_pre = tag == "pre"
        self.in_table = self.in_table or (tag == "table" and dict(attrs).get("id") == "pairs")
        if self.in_table and tag == "tr":
            self.rows.append([])
        elif self.in_table and tag in ("td", "th"):
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        self.in_pre = self.in_pre and tag != "pre"
        self.in_table = self.in_table and tag != "table"

    def handle_data(self, data):
        if self.in_pre:
            self.pre.append(data)
        elif self.in_table and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data


def test_copies_are_ranked_by_shared_code_the_reference_named_and_short_or_given_code_never_listed(
    tmp_path,
):
    rng = random.Random(3)
    ana = student(rng, "right")
    stubs = {m: (write_stubs(tmp_path / "stubs") / f"{m}.py").read_bytes() for m in MODULES}
    folders = [
        write(tmp_path / "ana", ana),
        write(
            tmp_path / "bea", disguised(rng, ana)
        ),  # ana's, renamed, reordered, comments and spacing changed
        write(tmp_path / "ref", reference()),
        write(tmp_path / "ren", disguised(rng, reference())),  # the reference, disguised
        write(tmp_path / "cal", student(rng, "right")),  # right work of their own
        write(tmp_path / "dan", student(rng, "right")),
        write(
            tmp_path / "eli", stubs | {"scores": reference()["scores"]}
        ),  # one short function, the reference's: 100% of eli's code
        write(tmp_path / "fay", stubs),  # the untouched stubs
    ]
    grades, page, pairs = (
        batch_csv(tmp_path / "grades.csv", folders),
        tmp_path / "similarity.html",
        tmp_path / "pairs.csv",
    )
    said = CliRunner().invoke(
        main, ["report", str(grades), "--similarity", str(page), "--pairs", str(pairs)]
    )
    assert said.exit_code == 0, said.output
    found = listed(said.output)
    assert set(found) == {("ana", "bea"), ("ref", REFERENCE), ("ren", REFERENCE)}, said.output
    assert min(tokens for tokens, _ in found.values()) >= MIN_TOKENS
    assert (
        "identical: scores.py, masking.py, softmax.py, heads.py, training.py"
        in found[("ref", REFERENCE)][1]
    )
    with pairs.open(encoding="utf-8") as file:
        rows = list(csv.reader(file))
    assert rows[0][:4] == ["student", "other", "rank", "shared tokens"]
    assert [tuple(r[:2]) for r in rows[1:]] == [
        pair for pair, _ in sorted(found.items(), key=lambda item: -item[1][0])
    ]
    assert [int(r[3]) for r in rows[1:]] == sorted((int(r[3]) for r in rows[1:]), reverse=True)
    parsed = Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    assert not parsed.live and len(parsed.rows) == 1 + len(found)
    shown_lines = "".join(parsed.pre)
    assert "np.swapaxes(k, -1, -2)" in shown_lines  # the reference's lines, beside the copy's
    # docstrings and stubs are never shared lines
    assert "Hint:" not in shown_lines and "raise NotImplementedError" not in shown_lines


def moved_onto_docstrings(text: str) -> str:
    """The module with each function's simple statements after its docstring moved onto the docstring's last line."""
    lines = text.splitlines()
    tree = ast.parse(text)
    for node in reversed([n for n in tree.body if isinstance(n, ast.FunctionDef)]):
        doc, rest = node.body[0], node.body[1:]
        simple = []
        for statement in rest:
            if isinstance(statement, ast.With | ast.For | ast.If | ast.While):
                break
            simple.append(statement)
        if not simple:
            continue
        code = "; ".join(ast.get_source_segment(text, s) for s in simple)
        lines[doc.end_lineno - 1] += "; " + code
        del lines[simple[0].lineno - 1 : simple[-1].end_lineno]
    return "\n".join(lines) + "\n"


def without_docstrings(text: str) -> str:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef) and isinstance(
            getattr(node.body[0], "value", None), ast.Constant
        ):
            node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


def test_the_reference_with_its_code_on_the_docstrings_lines_is_listed_as_the_reference(tmp_path):
    """The attack on a report that dropped docstring lines: it dropped the code moved onto them. The tokens are what count."""
    attack = {m: moved_onto_docstrings(text.decode("utf-8")) for m, text in reference().items()}
    # code moved: fewer lines
    assert attack["scores"].count("\n") < reference()["scores"].count(b"\n") - 1
    for (
        module,
        text,
    ) in (
        attack.items()
    ):  # the same program as the reference, so the same verdicts: it passes every check
        assert without_docstrings(text) == without_docstrings(
            reference()[module].decode("utf-8")
        ), module
    folder = write(tmp_path / "mallory", {m: t.encode("utf-8") for m, t in attack.items()})
    found = similar([Submission("mallory", folder=folder)])
    own = fingerprints.read(SOLUTIONS_DIR)
    assert [(p.first.id, p.second.id) for p in found.pairs] == [("mallory", REFERENCE)]
    assert found.pairs[0].shares() == (1.0, 1.0) and found.pairs[0].tokens > own.tokens * 0.9


def test_a_folder_named_in_bytes_that_are_not_utf8_is_compared_and_shown_escaped(tmp_path):
    """The attack: the row's folder cell escapes the name, so a report that looked for the cell as written left it out, silently."""
    named = Path(os.fsdecode(bytes(tmp_path) + b"/Jos\xe9"))
    folders = [
        write(named, reference()),
        write(tmp_path / "honest", student(random.Random(1), "right")),
    ]
    gone = tmp_path / "gone"
    grades = batch_csv(tmp_path / "grades.csv", [*folders, gone])
    said = CliRunner().invoke(main, ["report", str(grades), "--pairs", str(tmp_path / "pairs.csv")])
    assert said.exit_code == 0, said.output
    assert list(listed(said.output)) == [("Jos\\xe9", REFERENCE)]
    assert "Similarity of 2 submissions" in said.output
    # a row whose folder is not there is named, never left out
    assert f"Not compared, its folder not found: {gone}" in said.output


def test_a_module_of_megabytes_is_cut_to_the_bounds_and_says_so(tmp_path):
    """The attack: one 3.6 MB module took a report that read it whole past 1 GiB. Reading stops at the bounds, in a child's memory."""
    big = reference() | {
        "training": reference()["training"] + b"\nx = [" + b"1, " * 1_200_000 + b"]\n"
    }
    folders = [write(tmp_path / "huge", big), write(tmp_path / "ref", reference())]
    grades = batch_csv(tmp_path / "grades.csv", folders)
    peaks: list = []
    process = subprocess.Popen([sys.executable, "-m", "grader", "report", str(grades), "--pairs", str(tmp_path / "p.csv")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    watcher = threading.Thread(target=peak_tree, args=(process, peaks))
    watcher.start()
    stdout, stderr = process.communicate(timeout=300)
    watcher.join()
    run = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    assert run.returncode == 0, run.stderr
    assert len(big["training"]) > 3_600_000
    assert (
        f"training.py: {len(big['training']):,} bytes, its first {fingerprints.MODULE_BYTES:,} compared"
        in run.stdout
    )
    # and of those bytes, the tokens within the bound
    assert "training.py: its tokens of code past its first" in run.stdout
    # the honest one beside it too
    assert ("huge", REFERENCE) in listed(run.stdout) and ("ref", REFERENCE) in listed(run.stdout)
    # the interpreter and numpy alone hold more than 16 MiB
    assert 16 << 20 < peaks[0] < 256 << 20, f"{peaks[0] >> 20} MiB"


@pytest.mark.slow
def test_on_a_class_of_300_the_planted_copies_fill_the_top_of_the_pairs(tmp_path):
    """The instructor's class of 300: right work in many styles, mistakes, unfinished and broken work, five groups of copies and three
    copies of the reference (21 planted pairs). At least 19 of them in the top 25, at most 100 listed by default."""
    made = make_class(tmp_path / "class", 300, seed=0)
    grades = batch_csv(tmp_path / "grades.csv", list(made.folders.values()))
    pairs = tmp_path / "pairs.csv"
    said = CliRunner().invoke(main, ["report", str(grades), "--pairs", str(pairs)])
    assert said.exit_code == 0, said.output
    with pairs.open(encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    ranked = [frozenset((row["student"], row["other"])) for row in rows]
    assert sum(pair in made.planted() for pair in ranked[:25]) >= 19 and len(ranked) <= min(
        100, TOP
    )


names = st.binary(min_size=1, max_size=24).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")
)
units = st.sampled_from([b"(", b'"""', b"x = 1\n", b"'", b"\\\n", b"#" * 70 + b"\n"])
modules = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=2000).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.builds(
        lambda unit, n: unit * n, units, st.integers(0, 20_000)
    ),  # past the bounds of a module and of a submission
    st.just(b"").map(lambda _: reference()["heads"]),
)
submissions = st.lists(
    st.tuples(names, st.dictionaries(st.sampled_from(MODULES), modules, max_size=5), st.booleans()),
    min_size=1,
    max_size=4,
    unique_by=lambda c: c[0],
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(submissions)
# a backslash before a byte that is not UTF-8: today's folder cell writes it ambiguously
@example([(b"\\\x80", {}, True)])
def test_hostile_names_and_modules_never_crash_the_report_nor_go_missing(
    tmp_path_factory, submissions
):
    root = tmp_path_factory.mktemp("hostile")
    folders, gone = [], []
    for raw, modules_of, _ in submissions:
        folder = Path(os.fsdecode(bytes(root) + b"/class/" + raw))
        folder.parent.mkdir(exist_ok=True)
        folder.mkdir()
        for module, data in modules_of.items():
            (folder / f"{module}.py").write_bytes(data)
        folders.append(folder)
    for folder in folders:  # the bounds hold before anything is compared
        code = fingerprints.read(folder)
        assert (
            sum(len(t.encode("utf-8", "surrogateescape")) for t in code.texts.values())
            <= fingerprints.STUDENT_BYTES
        )
        assert code.tokens <= fingerprints.TOKENS
    grades = batch_csv(root / "grades.csv", folders)
    for folder, (_, _, kept) in zip(folders, submissions):
        if not kept:
            shutil.rmtree(folder)  # graded, then moved away before the report
            gone.append(folder)
    page = root / "similarity.html"
    said = CliRunner().invoke(
        main, ["report", str(grades), "--similarity", str(page), "--min-tokens", "1"]
    )
    assert said.exit_code == 0, said.output
    # every folder there compared
    assert f"Similarity of {len(folders) - len(gone)} submissions" in said.output
    # and every other one named
    assert said.output.count("Not compared, its folder not found: ") == len(gone)
    assert not [c for c in said.output if c != "\n" and (c < " " or c in outlet.BIDI)]
    parsed = Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    assert not parsed.live


def test_folder_cells_relative_to_the_csv_are_found(tmp_path, monkeypatch):
    """A row may name its folder relative to the batch's folders (the CSV beside them): found from the CSV's folder, wherever
    the report runs."""
    write(tmp_path / "class" / "ana", reference())
    grades = tmp_path / "grades.csv"
    grades.write_text(
        "student,folder,status,total,failed checks\nana,class/ana,graded,100.0,\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path / "class")
    said = CliRunner().invoke(main, ["report", str(grades), "--pairs", str(tmp_path / "pairs.csv")])
    assert said.exit_code == 0 and list(listed(said.output)) == [("ana", REFERENCE)], said.output
