"""What keeping a batch's rows costs: the CSV rewritten and synced after every row (as batch did) against a file per row.

Usage: python3 bench/bench_rows.py [SIZES...]   (default 300 1000 3000)

Both write the same rows, as batch makes them (every column, five sha256s, a reason), into a temporary folder on
the disk the system gives for temporary files. Before: after each row the whole CSV to a temporary file, synced,
put in place (O(n^2) bytes). After (grader/course/row_files.py): each row to a file of its own, synced, put in
place, and the CSV made from them after the 1st, 2nd, 4th ... row and at the end (O(n) bytes). Medians of 3 runs.
"""

import csv
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import machine

from grader.course.row_files import Rows
from grader.course.rows import COLUMNS, MODULE_SHA


def rows(size: int) -> list[dict]:
    """size rows shaped as batch writes them."""
    made = []
    for n in range(size):
        digest = hashlib.sha256(str(n).encode()).hexdigest()
        row = dict.fromkeys(COLUMNS, "20.0") | {
            "student": f"s{n:05d}",
            "folder": f"/srv/course/submitted/s{n:05d}/attention-by-hand",
        }
        made.append(
            row
            | dict.fromkeys(MODULE_SHA, digest)
            | {"reason": "softmax graded: softmax returned nan past 709 " * 4}
        )
    return made


def before(csv_file: Path, new: list[dict]) -> None:
    """The whole CSV to a temporary file, synced and put in place, after every row: batch's way until the row files."""
    kept: list[dict] = []
    for row in new:
        kept.append(row)
        temporary = csv_file.with_name(f".{csv_file.name}.tmp")
        with temporary.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(kept)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, csv_file)


def after(csv_file: Path, new: list[dict]) -> None:
    """A file per row, the CSV now and then and at the end: batch's way now."""
    kept = Rows(csv_file)
    for row in new:
        kept.put(row)
    kept.write_csv()


def timed(way, size: int) -> float:
    """Seconds one way takes to keep size rows, in a fresh folder."""
    made = rows(size)
    with tempfile.TemporaryDirectory(prefix="bench-rows-") as scratch:
        start = time.perf_counter()
        way(Path(scratch) / "grades.csv", made)
        return time.perf_counter() - start


def main(sizes: list[int]) -> None:
    print(f"load average before: {machine.load()}", flush=True)
    for size in sizes:
        runs: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(3):  # alternated, so the machine's mood falls on both alike
            for name, way in (("before", before), ("after", after)):
                runs[name].append(timed(way, size))
        old, new = statistics.median(runs["before"]), statistics.median(runs["after"])
        print(
            f"{size} rows: before {old:.2f} s ({1000 * old / size:.1f} ms a row), after {new:.2f} s ({1000 * new / size:.1f} ms a row)",
            flush=True,
        )
    print(f"load average after: {machine.load()}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [300, 1000, 3000])
