"""grader report --similarity: near-copies between submissions and of the reference, renamed or not, the stubs left out."""

import re
import shutil
from html.parser import HTMLParser

from click.testing import CliRunner

from grader.cli import main
from grader.course.similarity import similarity
from grader.course.stubs import write_stubs
from grader.paths import MODULES, SOLUTIONS_DIR

MUTANTS = SOLUTIONS_DIR.parent / "tests" / "mutants"


def copied(folder, rename: bool = False, **replaced):
    """The reference in folder, its names changed when rename, some modules replaced by a mutant's file."""
    folder.mkdir()
    for name in MODULES:
        text = (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8")
        if rename:
            text = re.sub(r"\btop\b", "peak", re.sub(r"\bshares\b", "weights", text))
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    for name, mutant in replaced.items():
        shutil.copy(MUTANTS / "wrong" / f"{mutant}.py", folder / f"{name}.py")
    return folder


def test_similarity_finds_copies_renamed_and_of_the_reference_and_never_the_stubs(tmp_path):
    copied(tmp_path / "ada")
    copied(tmp_path / "ren", rename=True)
    write_stubs(tmp_path / "stub1")
    write_stubs(tmp_path / "stub2")
    page, csv_file = tmp_path / "pairs.html", tmp_path / "grades.csv"
    folders = "".join(f"{n},{tmp_path / n},graded,0.0\n" for n in ("ada", "ren", "stub1", "stub2"))
    csv_file.write_text("student,folder,status,total,seconds,failed checks,mistakes\n" + folders, encoding="utf-8")
    said = CliRunner().invoke(main, ["report", str(csv_file), "--similarity", str(page)])
    assert said.exit_code == 0, said.output
    listed = re.findall(r"^ *(\d+)%  (\S+)  ~  (.+?)(?:;|$)", said.output, flags=re.M)
    pairs = {(a.rsplit("/", 1)[-1], "reference" if b.startswith("solutions/") else b.rsplit("/", 1)[-1]): int(s) for s, a, b in listed}
    assert pairs[("ada", "ren")] >= 90 and pairs[("ada", "reference")] == 100 and pairs[("ren", "reference")] >= 90
    assert not [pair for pair in pairs if "stub1" in pair or "stub2" in pair]  # the code every student was given counts for no one
    assert "identical: heads.py, masking.py, scores.py, softmax.py, training.py" in said.output
    assert "np.exp(x - top)" in said.output and "raise NotImplementedError" not in said.output

    class Rows(HTMLParser):
        rows = 0

        def handle_starttag(self, tag, attrs):
            self.rows += tag == "tr"
            assert tag != "script" and not any(name.startswith("on") for name, _ in attrs)

    parsed = Rows()
    parsed.feed(page.read_text(encoding="utf-8"))
    assert parsed.rows == len(pairs) + 1


def test_a_threshold_outside_0_to_1_is_refused(tmp_path, capsys):
    assert similarity([tmp_path], threshold=50) == 2 and "0.5 is half" in capsys.readouterr().err
