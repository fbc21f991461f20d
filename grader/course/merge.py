"""`grader merge CSV... --csv OUT`: the CSVs of a class's shards (`grader batch --shard I/N`) joined into one.

Rows are joined by student (the key batch writes, the same on every machine). A student in two CSVs with the same
files (every module's sha256 alike: two runs over the same upload) is one row, the first CSV's; with different files
the merge is refused, since the CSVs were made from different uploads of that student and one grade would be lost.
The result is the CSV one unsharded run would have written: sorted by student, its columns those of the CSVs.
"""

import csv
import os
from pathlib import Path

import click

from grader import outlet
from grader.course.row_files import write_csv
from grader.course.rows import MODULE_SHA

SHOWN = 10  # the most students a refusal names


class MergeError(Exception):
    """Why the CSVs cannot be merged, in the words the instructor reads."""


def merge(csv_files, out: Path) -> int:
    """Join the CSVs into out: 0 when written, 2 (nothing written) when an input cannot be read or a student was graded twice
    with different files."""
    try:
        problem = where_problem(Path(out))
        if problem:
            raise MergeError(problem)
        columns, rows, notes = joined(
            list({os.path.realpath(path): Path(path) for path in csv_files}.values())
        )
    except MergeError as error:
        click.echo(str(error), err=True)
        return 2
    write_csv(Path(out), rows, columns)
    for note in notes:
        click.echo(outlet.terminal(note), err=True)
    click.echo(f"{len(rows)} students from {len(csv_files)} CSVs written to {out}.")
    return 0


def where_problem(out: Path) -> str:
    """What keeps the merged CSV from being written at out, or ""."""
    if out.is_dir():
        return f"--csv {out} is a folder: name the CSV file to write, such as {out / 'grades.csv'}."
    if not out.parent.is_dir():
        return f"{out.parent} does not exist: create it or choose another --csv path."
    return ""


def joined(csv_files: list[Path]) -> tuple[list[str], list[dict], list[str]]:
    """(the columns, one row per student, notes on students graded twice with the same files to different results)."""
    columns: dict[str, None] = {}
    kept: dict[str, tuple[dict, Path]] = {}
    clashes, notes = [], []
    for path in csv_files:
        header, rows = read(path)
        columns.update(dict.fromkeys(header))
        here: set[str] = set()
        for row in rows:
            student = row["student"]
            if student in here:
                raise MergeError(
                    f"{path} has two rows for {student}: grader batch writes one; merge the CSVs it wrote."
                )
            here.add(student)
            if student not in kept:
                kept[student] = (row, path)
                continue
            clash, note = compare(kept[student], (row, path))
            clashes += [clash] if clash else []
            notes += [note] if note else []
    if clashes:
        more = f"\n... and {len(clashes) - SHOWN} more." if len(clashes) > SHOWN else ""
        raise MergeError(
            f"Not merged: {len(clashes)} students were graded with different files in two CSVs, so the CSVs come from "
            "different uploads of theirs:\n"
            + "\n".join(outlet.terminal(c) for c in clashes[:SHOWN])
            + more
            + "\nGrade each "
            "of them once, from the upload that counts (grader batch FOLDER --csv ... --regrade FOLDER), and merge again."
        )
    return list(columns), [row for row, _ in kept.values()], notes


def read(path: Path) -> tuple[list[str], list[dict]]:
    """A batch CSV's header and rows, or a MergeError saying why it is not one."""
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = list(reader.fieldnames or [])
            rows = [dict(row) for row in reader if row.get("student")]
    except FileNotFoundError:
        raise MergeError(
            f"{path} does not exist: name the CSVs that grader batch --shard wrote."
        ) from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise MergeError(
            f"{path} cannot be read ({error}): name the CSVs that grader batch --shard wrote."
        ) from None
    missing = [column for column in ("student", *MODULE_SHA) if column not in header]
    if missing:
        raise MergeError(
            f"{path} is not a CSV of grader batch: it has no {', '.join(missing)} column."
        )
    return header, rows


def compare(first: tuple[dict, Path], second: tuple[dict, Path]) -> tuple[str, str]:
    """(what clashes: the modules that differ, or ""; a note when the same files got a different result, or "")."""
    (one, one_path), (other, other_path) = first, second
    differ = [
        column.removesuffix(" sha256")
        for column in MODULE_SHA
        if one.get(column, "") != other.get(column, "")
    ]
    if differ:
        return (
            f"{one['student']}: {', '.join(differ)} differ between {one_path} and {other_path}",
            "",
        )
    if (one.get("status"), one.get("total")) != (other.get("status"), other.get("total")):
        return "", (
            f"{one['student']} was graded twice with the same files, {one.get('status')} {one.get('total')} in {one_path} and "
            f"{other.get('status')} {other.get('total')} in {other_path}: kept the first (grader batch --regrade grades it again)."
        )
    return "", ""
