"""`grader batch --shard I/N`: every upload in exactly one share, the same share in every process, bad values refused."""

import csv
import os
import shlex
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from grader.cli import main
from grader.course import batch as batches
from grader.course.shards import Shard, ShardError, parse, select, share
from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox.intake import Upload

KEYS = st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=30)


@given(KEYS, st.integers(1, 12))
def test_every_upload_is_in_exactly_one_share_and_the_shares_keep_the_order_given(keys, count):
    uploads = [Upload(key, ()) for key in keys]
    shares = [select(uploads, Shard(number, count)) for number in range(1, count + 1)]
    assert sorted(u.key for each in shares for u in each) == sorted(keys)
    for each in shares:
        assert each == [u for u in uploads if u in each]  # in the order given
    assert select(uploads, None) == uploads


def test_the_split_is_the_same_in_every_process_whatever_its_hash_seed():
    keys = ["ada", "grace", "a/ada", "b/ada", "Jos\\xe9", "'=cmd", "s0001", "s0002", "\ud83d\ude00"]
    here = [share(key, 7) for key in keys]
    program = f"from grader.course.shards import share; print([share(k, 7) for k in {keys!r}])"
    for seed in ("1", "2"):
        there = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert there.stdout.strip() == str(here), there.stderr
    assert len(set(here)) > 1  # the keys spread over the shares


def test_a_class_splits_into_shares_of_about_its_size_over_n():
    keys = [f"s{n:04d}" for n in range(1, 1001)]
    sizes = [sum(share(key, 4) == number for key in keys) for number in range(1, 5)]
    assert sum(sizes) == 1000 and all(200 <= size <= 300 for size in sizes), sizes


@pytest.mark.parametrize(
    "text, said",
    [
        ("0/2", "counted from 1 to 2"),
        ("3/2", "counted from 1 to 2"),
        ("1/0", "number of shares must be from 1"),
        ("half", "is not I/N"),
        ("1/2/3", "is not I/N"),
        ("-1/2", "is not I/N"),
    ],
)
def test_a_bad_shard_says_what_to_write(text, said):
    with pytest.raises(ShardError, match=said):
        parse(text)
    result = CliRunner().invoke(
        main, ["batch", "somewhere", "--csv", "grades.csv", "--shard", text]
    )
    assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output


def test_a_shard_is_read_as_written():
    assert (
        parse("2/3") == Shard(2, 3)
        and parse(" 1 / 1 ") == Shard(1, 1)
        and str(parse("2/3")) == "2/3"
    )


def test_jobs_default_to_the_cpus_this_process_may_use(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(batches, "usable_cpus", lambda: 3)
    # nothing is graded: no isolation needed
    monkeypatch.setattr(batches, "isolation_problem", lambda allowed: "")
    assert batches.batch([], csv_file=tmp_path / "grades.csv") == 0
    assert "0 to grade, 0 already in" in (said := capsys.readouterr().out) and "3 at a time" in said
    assert "default: the CPUs this process may use" in " ".join(
        CliRunner().invoke(main, ["batch", "--help"]).output.split()
    )


def rows_of(csv_file) -> list[dict]:
    with csv_file.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def guide_commands() -> list[list[str]]:
    """The commands of the instructor guide's first example of shards, as words."""
    guide = (KIT_ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    section = guide.partition("### A class over several machines")[2]
    block = section.split("```bash\n")[1].partition("```")[0]
    return [shlex.split(line, comments=True) for line in block.splitlines()]


@pytest.mark.slow
def test_the_guides_shards_then_merged_are_the_class_graded_at_once(
    tmp_path, pristine, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    names = ["ada", "bo", "cy", "dee", "eli", "fay"]
    ones, twos = (
        [n for n in names if share(n, 2) == 1][:2],
        [n for n in names if share(n, 2) == 2][:1],
    )
    for name in ones + twos:
        shutil.copytree(
            SOLUTIONS_DIR if name == ones[0] else pristine, tmp_path / "submissions" / name
        )
    # what the shell makes of submissions/*
    folders = sorted(str(path) for path in (tmp_path / "submissions").iterdir())
    commands = guide_commands()
    assert [words[:2] for words in commands] == [
        ["grader", "batch"],
        ["grader", "batch"],
        ["grader", "merge"],
    ]
    run = CliRunner()
    for words in commands:
        argv = [
            part for word in words[1:] for part in (folders if word == "submissions/*" else [word])
        ]
        result = run.invoke(main, argv)
        assert result.exit_code == 0, result.output
        if "--shard" in words:
            number = int(words[words.index("--shard") + 1][0])
            assert (
                f"Shard {number}/2: {len(ones if number == 1 else twos)} of the 3 uploads"
                in result.output
            ), result.output
    again = run.invoke(main, ["batch", *folders, "--csv", "shard-1.csv", "--shard", "1/2"])
    assert "0 to grade, 2 already in" in again.output, again.output  # a rerun of a shard resumes
    whole = run.invoke(main, ["batch", *folders, "--jobs", "2", "--csv", "whole.csv"])
    assert whole.exit_code == 0, whole.output
    timeless = [
        [{**r, "seconds": ""} for r in rows_of(tmp_path / name)]
        for name in ("grades.csv", "whole.csv")
    ]
    assert timeless[0] == timeless[1] and [r["total"] for r in timeless[0]] == [
        "100.0",
        "0.0",
        "0.0",
    ]
    assert [r["student"] for r in timeless[0]] == sorted([*ones, *twos])


def test_a_regrade_of_another_shards_upload_says_which_shard_grades_it(tmp_path, capsys):
    other = tmp_path / "dee"  # in the second of two shares (the split is fixed: sha256 of the key)
    shutil.copytree(SOLUTIONS_DIR, other, ignore=shutil.ignore_patterns("__pycache__"))
    assert share("dee", 2) == 2
    csv_file = tmp_path / "g.csv"
    code = batches.batch([], jobs=1, csv_file=csv_file, regrade=[other], shard=Shard(1, 2))
    said = capsys.readouterr().err
    assert code == 0 and "Not regraded by shard 1/2" in said and "dee (shard 2/2)" in said
    assert "Pass --regrade to the shard named." in said
