"""`grader merge`: shards' CSVs joined into the CSV one run over the whole class writes, or refused with the reason."""

import csv

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from grader.cli import main
from grader.course.row_files import write_csv
from grader.course.rows import COLUMNS, MODULE_SHA
from grader.exercises import NAMES

CELL = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@st.composite
def rows(draw) -> list[dict]:
    """A class's rows, as batch writes them: one per student, every column a string; a reason in any characters."""
    students = draw(st.lists(CELL.filter(bool), unique=True, max_size=20))
    return [
        dict.fromkeys(COLUMNS, "20.0")
        | {
            "student": student,
            "reason": draw(CELL),
            "total": draw(st.sampled_from(["0.0", "42.5", "100.0"])),
        }
        | {column: draw(st.sampled_from(["", "a" * 64, "b" * 64])) for column in MODULE_SHA}
        for student in students
    ]


def merged(tmp_path, *csv_files, out="merged.csv"):
    return CliRunner().invoke(main, ["merge", *map(str, csv_files), "--csv", str(tmp_path / out)])


@given(rows(), st.data())
def test_any_split_of_a_class_into_shards_merges_to_the_unsharded_csv(
    tmp_path_factory, class_rows, data
):
    tmp_path = tmp_path_factory.mktemp("merge")
    count = data.draw(st.integers(1, 4))
    # a student twice: same files
    homes = [
        data.draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=2, unique=True))
        for _ in class_rows
    ]
    write_csv(tmp_path / "whole.csv", class_rows)
    shards = [tmp_path / f"shard-{n}.csv" for n in range(count)]
    for n, shard in enumerate(shards):
        write_csv(shard, [row for row, home in zip(class_rows, homes) if n in home])
    result = merged(tmp_path, *shards)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "merged.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()


def row(student: str, total: str = "100.0", sha: str = "a" * 64, status: str = "passed") -> dict:
    return {
        "student": student,
        "status": status,
        "total": total,
        **{name: "20.0" for name in NAMES},
        **dict.fromkeys(MODULE_SHA, sha),
    }


def test_a_student_graded_twice_with_different_files_is_refused_and_nothing_written(tmp_path):
    write_csv(tmp_path / "one.csv", [row("ada"), row("bo")])
    changed = row("ada", total="80.0") | {"softmax.py sha256": "c" * 64}
    write_csv(tmp_path / "two.csv", [changed, row("cy")])
    result = merged(tmp_path, tmp_path / "one.csv", tmp_path / "two.csv")
    assert result.exit_code == 2 and not (tmp_path / "merged.csv").exists()
    assert "1 students were graded with different files" in result.output
    assert (
        f"ada: softmax.py differ between {tmp_path / 'one.csv'} and {tmp_path / 'two.csv'}"
        in result.output
    )
    assert "--regrade FOLDER" in result.output and "Traceback" not in result.output


def test_the_same_files_graded_twice_is_one_row_the_first_kept_and_a_different_result_said(
    tmp_path,
):
    write_csv(tmp_path / "one.csv", [row("ada", total="90.0", status="graded")])
    write_csv(tmp_path / "two.csv", [row("ada"), row("bo")])
    result = merged(tmp_path, tmp_path / "one.csv", tmp_path / "two.csv")
    assert result.exit_code == 0, result.output
    assert (
        "ada was graded twice with the same files, graded 90.0" in result.output
        and "kept the first" in result.output
    )
    with (tmp_path / "merged.csv").open(newline="") as f:
        assert [(r["student"], r["total"]) for r in csv.DictReader(f)] == [
            ("ada", "90.0"),
            ("bo", "100.0"),
        ]


def test_an_input_that_is_not_a_batch_csv_is_named_and_nothing_written(tmp_path):
    (tmp_path / "other.csv").write_text("name,points\nada,3\n")
    write_csv(tmp_path / "one.csv", [row("ada")])
    for path, said in [
        (tmp_path / "missing.csv", "missing.csv does not exist"),
        (
            tmp_path / "other.csv",
            "is not a CSV of grader batch: it has no student, scores.py sha256",
        ),
    ]:
        result = merged(tmp_path, tmp_path / "one.csv", path)
        assert (
            result.exit_code == 2
            and said in result.output
            and not (tmp_path / "merged.csv").exists()
        ), result.output
    write_csv(tmp_path / "twice.csv", [row("ada"), row("bo")])
    (tmp_path / "twice.csv").write_text(
        (tmp_path / "twice.csv").read_text()
        + (tmp_path / "twice.csv").read_text().splitlines()[1]
        + "\n"
    )
    result = merged(tmp_path, tmp_path / "twice.csv")
    assert result.exit_code == 2 and "has two rows for ada" in result.output
    result = merged(tmp_path, tmp_path / "one.csv", out="nowhere/merged.csv")
    assert result.exit_code == 2 and "does not exist: create it" in result.output


def test_the_same_csv_named_twice_is_read_once(tmp_path):
    write_csv(tmp_path / "one.csv", [row("ada")])
    result = merged(tmp_path, tmp_path / "one.csv", tmp_path / "one.csv")
    assert result.exit_code == 0 and "1 students from" in result.output, result.output
