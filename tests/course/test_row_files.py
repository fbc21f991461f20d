"""A batch's rows: one file per student beside the CSV, read back on a rerun; the CSV made from them O(log n) times."""

import csv
import json
import os

from grader.course.row_files import Rows, file_of, folder_of, write_csv
from grader.course.rows import MODULE_SHA


def row(student: str, total: str = "100.0") -> dict:
    return {
        "student": student,
        "status": "passed",
        "total": total,
        **dict.fromkeys(MODULE_SHA, "a" * 64),
    }


def test_each_row_is_a_file_of_its_own_and_the_csv_is_made_from_them_now_and_then(tmp_path):
    csv_file = tmp_path / "grades.csv"
    # a CSV from before the folder, or merge's
    write_csv(csv_file, [row("old", total="10.0"), row("ada", total="0.0")])
    kept = Rows(csv_file)
    assert sorted(kept.by_student) == ["ada", "old"]
    rewrites = []
    kept.write_csv = lambda: rewrites.append(kept.added)  # type: ignore[method-assign]
    for n in range(1, 10):
        kept.put(row(f"s{n}") | {"reason": "x" * n})
    assert rewrites == [1, 2, 4, 8]  # the CSV is rewritten O(log n) times
    kept.put(row("ada", total="100.0"))
    files = sorted(folder_of(csv_file).iterdir())
    # one per student: ada's replaced
    assert len(files) == 10 and file_of(folder_of(csv_file), "ada") in files
    assert json.loads(file_of(folder_of(csv_file), "ada").read_text())["total"] == "100.0"
    (folder_of(csv_file) / "notes.json").write_text("[1, 2]")  # not a row: left out
    (folder_of(csv_file) / ".abc.json.999999999.tmp").write_text("{")  # what a killed batch left
    again = Rows(csv_file)
    assert (
        again.by_student["ada"]["total"] == "100.0"
        and again.by_student["old"]["total"] == "10.0"
        and len(again.by_student) == 11
    )
    assert not list(folder_of(csv_file).glob(".*.tmp"))
    again.write_csv()
    with csv_file.open(newline="") as f:
        assert [r["student"] for r in csv.DictReader(f)] == sorted(again.by_student)


def test_a_row_file_newer_than_the_csv_wins_and_an_older_one_gives_way(tmp_path):
    csv_file = tmp_path / "grades.csv"
    kept = Rows(csv_file)
    kept.put(row("ada", total="10.0"))  # the CSV is written after the 1st row: ada 10
    kept.put(row("bo", total="20.0"))  # and after the 2nd
    kept.put(row("cy", total="30.0"))  # the 3rd is in its file only, as when a run is killed here
    assert sorted(Rows(csv_file).by_student) == ["ada", "bo", "cy"]
    kept.put(row("ada", total="15.0"))  # the 4th: the CSV again, ada 15
    # then the instructor edits ada's total by hand
    text = csv_file.read_text().replace(",15.0,", ",99.0,")
    csv_file.write_text(text)
    # a second after: a file system's clock is coarse
    later = file_of(folder_of(csv_file), "ada").stat().st_mtime_ns + 10**9
    os.utime(csv_file, ns=(later, later))
    assert Rows(csv_file).by_student["ada"]["total"] == "99.0"
