"""grader report --similarity: near-copies of the reference and between submissions, renamed or not, the stubs left out."""

import ast
import re
import shutil
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.course.similarity import lines_of, pairs, similarity
from grader.course.stubs import write_stubs
from grader.paths import MODULES, SOLUTIONS_DIR

MUTANTS = SOLUTIONS_DIR.parent / "tests" / "mutants"
LISTED = re.compile(r"^ +(\d+)%  (\S+)(?:  ~  (\S+))?(?:  +(.*))?$", flags=re.M)


def copied(folder, rename: bool = False, **replaced):
    """The reference in folder, some modules replaced by a mutant's file, then its names changed when rename."""
    folder.mkdir()
    for name in MODULES:
        shutil.copy(SOLUTIONS_DIR / f"{name}.py", folder / f"{name}.py")
    for name, mutant in replaced.items():
        shutil.copy(MUTANTS / mutant, folder / f"{name}.py")
    for path in folder.iterdir() if rename else ():
        path.write_text(re.sub(r"\btop\b", "peak", re.sub(r"\bshares\b", "weights", path.read_text(encoding="utf-8"))), encoding="utf-8")
    return folder


class Page(HTMLParser):
    """Each table's rows of cell texts by id, the text of the <pre> blocks, and whether anything on the page would run."""

    def __init__(self):
        super().__init__()
        self.tables, self.table, self.pre, self.in_pre, self.live = {}, None, [], False, False

    def handle_starttag(self, tag, attrs):
        self.live |= tag == "script" or any(name.startswith("on") for name, _ in attrs)
        self.in_pre = tag == "pre"
        if tag == "table":
            self.table = self.tables.setdefault(dict(attrs)["id"], [])
        elif tag == "tr" and self.table is not None:
            self.table.append([])
        elif tag in ("td", "th") and self.table is not None:
            self.table[-1].append("")

    def handle_endtag(self, tag):
        self.table = None if tag == "table" else self.table
        self.in_pre = self.in_pre and tag != "pre"

    def handle_data(self, data):
        if self.in_pre:
            self.pre.append(data)
        elif self.table and self.table[-1]:
            self.table[-1][-1] += data


@pytest.mark.slow
def test_similarity_finds_copies_of_the_reference_and_between_students_and_never_the_stubs(tmp_path):
    copied(tmp_path / "ada")
    copied(tmp_path / "ren", rename=True)
    copied(tmp_path / "eve", softmax="wrong/softmax__no_max_shift.py")
    copied(tmp_path / "kim", rename=True, softmax="wrong/softmax__no_max_shift.py")  # eve's, renamed
    copied(tmp_path / "ned", softmax="right/softmax__loops.py")
    copied(tmp_path / "ola", rename=True, softmax="right/softmax__loops.py")  # ned's, renamed
    copied(tmp_path / "lou", masking="right/masking__arange_compare.py")
    write_stubs(tmp_path / "stub1")
    shutil.copytree(write_stubs(tmp_path / "stub2"), tmp_path / "max")
    shutil.copy(MUTANTS / "right" / "masking__arange_compare.py", tmp_path / "max" / "masking.py")  # lou's masking, all max wrote
    page, csv_file = tmp_path / "pairs.html", tmp_path / "grades.csv"
    names = ("ada", "ren", "eve", "kim", "ned", "ola", "lou", "max", "stub1", "stub2")
    csv_file.write_text(
        "student,folder,status,total,seconds,failed checks,mistakes\n" + "".join(f"{n},{tmp_path / n},graded,0.0\n" for n in names),
        encoding="utf-8",
    )
    said = CliRunner().invoke(main, ["report", str(csv_file), "--similarity", str(page)])
    assert said.exit_code == 0, said.output
    of_reference, between = said.output.split("Between submissions")
    listed = {(a, b or "reference"): (int(share), what or "") for share, a, b, what in LISTED.findall(of_reference + between)}
    assert listed[("ada", "reference")] == (100, "identical: heads.py, masking.py, scores.py, softmax.py, training.py")
    assert listed[("ren", "reference")][0] == 100 and listed[("kim", "reference")][0] >= 90  # names changed, the code the same
    assert listed[("ned", "ola")][0] >= 90 and "partly shared: softmax.py" in listed[("ned", "ola")][1]  # beyond the reference
    assert ("eve", "kim") not in listed  # the same copy of the reference with one line changed: each is listed against it
    assert listed[("lou", "max")] == (100, "identical: masking.py")
    assert ("ada", "ren") not in listed  # two copies of the reference are listed once each, against it
    assert not [pair for pair in listed if "stub1" in pair or "stub2" in pair]  # the code every student was given counts for no one
    assert "np.exp" not in said.output  # the shared lines are the page's

    parsed = Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    assert not parsed.live
    assert {row[1]: row[0] for row in parsed.tables["reference"][1:]} == {
        a: f"{s}%" for (a, b), (s, _) in listed.items() if b == "reference"
    }
    assert {tuple(row[1:3]) for row in parsed.tables["pairs"][1:]} == {(a, b) for a, b in listed if b != "reference"}
    assert "        e = np.exp(x)  # (..., S), largest entry of each row is 1" in "".join(parsed.pre)  # eve's and kim's mistake


def test_a_threshold_outside_0_to_1_is_refused(tmp_path, capsys):
    assert similarity([tmp_path], threshold=50) == 2 and "0.5 is half" in capsys.readouterr().err


def undocumented(folder, comment: str = ""):
    """The reference in folder with every docstring deleted, each comment changed to another when comment is given."""
    folder.mkdir()
    for name in MODULES:
        text = (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        for node in reversed([n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Module | ast.FunctionDef)]):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                del lines[first.lineno - 1 : first.end_lineno]
        code = "".join(lines)
        (folder / f"{name}.py").write_text(re.sub(r"#.*", f"# {comment}", code) if comment else code, encoding="utf-8")
    return folder


def test_copies_of_the_reference_without_docstrings_pair_with_the_reference_not_with_each_other(tmp_path):
    """Docstrings are text, not code: deleting them neither hides a copy nor makes two copies of the reference a pair."""
    dirs = {"pat": undocumented(tmp_path / "pat"), "quinn": undocumented(tmp_path / "quinn", "my own words")}
    of_reference, between = pairs(dirs, 0.5)
    assert {p.first for p in of_reference if p.score >= 0.95} == {"pat", "quinn"}
    assert between == []  # it was a 100% pair before: the k-grams across a missing docstring were not the reference's


def test_a_line_is_shown_as_shared_only_where_a_match_covers_it_whole():
    """A run of matching tokens that ends on a line's first word does not make that line shared: the rest may differ."""
    text = "a = 1\n    b = f(a)\n    return np.einsum(b)\n"
    second = text.index("b = f")
    third = text.index("return")
    shown = lines_of(text, ([0], [third + len("return")]), frozenset())
    assert shown == ["a = 1", "    b = f(a)"] and second > 0
