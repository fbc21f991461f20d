"""One snapshot per run: each of the five files read once, by one reader that refuses links, its hashes used everywhere."""

import hashlib
import io
import os
import shutil

import pytest
from click.testing import CliRunner

from grader.check.files import depends_on, hashes_for, read_modules
from grader.check.results import CheckResult, ExerciseResult, Report
from grader.check.state import State, live_fingerprints
from grader.cli import main
from grader.paths import MODULES, SOLUTIONS_DIR
from grader.sandbox.guard import refusals
from grader.sandbox.private import NotRegular, Snapshot, read_module
from grader.sandbox.worker.imports import siblings


@pytest.fixture
def folder(tmp_path):
    """A copy of the reference as a student's folder."""
    work = tmp_path / "work"
    work.mkdir()
    for name in MODULES:
        shutil.copy(SOLUTIONS_DIR / f"{name}.py", work)
    return work


def counting_opens(monkeypatch, folder) -> dict[str, int]:
    """Count every open of a file in folder, by os.open and by io.open (what Path.read_bytes and open use)."""
    counts: dict[str, int] = {}
    real_os_open, real_io_open = os.open, io.open

    def seen(path):
        if isinstance(path, (str, os.PathLike)) and os.path.dirname(os.path.abspath(path)) == str(
            folder
        ):
            counts[os.path.basename(path)] = counts.get(os.path.basename(path), 0) + 1

    def os_open(path, *args, **kwargs):
        seen(path)
        return real_os_open(path, *args, **kwargs)

    def io_open(path, *args, **kwargs):
        seen(path)
        return real_io_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr("builtins.open", io_open)
    return counts


def test_grader_check_reads_each_file_once(folder, monkeypatch):
    counts = counting_opens(monkeypatch, folder)
    run = CliRunner().invoke(main, ["check", "scores", "--submission", str(folder)])
    assert run.exit_code == 0, run.output
    assert {name: counts.get(f"{name}.py", 0) for name in MODULES} == {name: 1 for name in MODULES}


@pytest.mark.slow
def test_the_root_cause_from_a_saved_verdict_costs_no_second_read(folder, monkeypatch):
    """masking's saved verdict of the same files names the cause of heads: the report is made from the run's snapshot alone."""
    checks = [CheckResult("masking.c", "failed", "-inf is missing above the diagonal")]
    wrong = ExerciseResult(
        "masking", "failed", 0.0, 15.0, checks, files=hashes_for(read_modules(folder), "masking")
    )
    State(folder).save(Report([wrong], seed=0))
    counts = counting_opens(monkeypatch, folder)
    run = CliRunner().invoke(main, ["check", "heads", "--submission", str(folder)])
    assert run.exit_code == 0, run.output
    assert (
        "heads uses your masking, which fails its checks" in run.output
        and "fix masking first" in run.output
    )
    assert {name: counts.get(f"{name}.py", 0) for name in MODULES} == {name: 1 for name in MODULES}


def test_the_verdict_is_filed_under_the_files_it_was_given(folder):
    files = {f"{m}.py": read_module(folder, m) for m in MODULES}
    snapshot_hashes = {
        f"{m}.py": hashlib.sha256(files[f"{m}.py"]).hexdigest() for m in depends_on(files, "scores")
    }
    # after the snapshot, before the verdict is saved
    (folder / "scores.py").write_text("# saved while the checks ran\n")
    verdict = ExerciseResult(
        "scores",
        "passed",
        10.0,
        10.0,
        [CheckResult("scores.c", "passed", "")],
        files=snapshot_hashes,
    )
    State(folder).save(Report([verdict], seed=0))
    # the live file is not the one graded
    assert "scores" not in State.load(folder).fresh(live_fingerprints(folder))
    shutil.copy(SOLUTIONS_DIR / "scores.py", folder)
    assert "scores" in State.load(folder).fresh(live_fingerprints(folder))


def test_a_run_reports_the_snapshots_hashes(folder):
    with Snapshot(folder) as snapshot:
        assert snapshot.hashes == {
            f"{m}.py": hashlib.sha256((folder / f"{m}.py").read_bytes()).hexdigest()
            for m in MODULES
        }
        assert {p.name: p.read_bytes() for p in snapshot.folder.iterdir()} == snapshot.files


@pytest.mark.linux("symbolic links and FIFOs as POSIX makes them")
def test_the_reader_refuses_a_link_and_does_not_block_on_a_fifo(folder):
    (folder / "scores.py").unlink()
    (folder / "scores.py").symlink_to(SOLUTIONS_DIR / "scores.py")
    with pytest.raises(NotRegular, match="symbolic link"):
        read_module(folder, "scores")
    (folder / "softmax.py").unlink()
    os.mkfifo(folder / "softmax.py")
    with pytest.raises(NotRegular, match="not a regular file"):
        read_module(folder, "softmax")


def test_a_link_swapped_in_after_the_look_is_refused_by_check(folder, monkeypatch):
    from grader.sandbox import intake

    def look_then_swap(where, name):
        if name == "training":
            (folder / "scores.py").unlink()
            (folder / "scores.py").symlink_to(SOLUTIONS_DIR / "scores.py")

    monkeypatch.setattr(intake, "check_module", look_then_swap)
    run = CliRunner().invoke(main, ["check", "scores", "--submission", str(folder)])
    assert run.exit_code == 2 and "scores.py is a symbolic link" in run.output


@pytest.mark.parametrize(
    "source, found",
    [
        ("from . import (softmax as s)\n", {"softmax"}),
        (
            "from .softmax import softmax\nfrom . import masking, scores\n",
            {"softmax", "masking", "scores"},
        ),
        ("import numpy as np\nfrom .. import x\n", set()),
        (
            "s = 'from .softmax import softmax'\n",
            set(),
        ),  # a string, not an import: the regex once took it for one
    ],
)
def test_imports_are_read_from_the_syntax_tree(source, found):
    assert siblings(source.encode()) == found


def test_the_cache_and_the_guard_agree_on_a_parenthesised_import(folder):
    (folder / "scores.py").write_text("from . import (softmax as s)\n")
    (folder / "softmax.py").write_text("import solutions.softmax\n")
    files = {f"{m}.py": (folder / f"{m}.py").read_bytes() for m in MODULES}
    assert depends_on(files, "scores") == ["scores", "softmax"]
    assert "scores" in refusals(folder)
