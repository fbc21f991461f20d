"""`grader batch`: one row per submission whatever it does, written atomically, resumable."""

import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from busy import allowed
from click.testing import CliRunner
from survivors import sleepers

from grader.cli import main
from grader.course import batch as batches
from grader.course import rows
from grader.course.batch import batch
from grader.course.row_files import write_csv as write_rows
from grader.course.rows import COLUMNS, row
from grader.course.stubs import write_stubs
from grader.exercises import NAMES
from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox import intake
from grader.sandbox.tree import end_processes

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"


def make(
    root: Path, name: str, base: Path = SOLUTIONS_DIR, case: str | None = None, **modules
) -> Path:
    """A submission folder: a copy of base, a hostile case laid over it, some modules replaced."""
    folder = root / name
    shutil.copytree(base, folder, ignore=shutil.ignore_patterns("__pycache__", ".grader"))
    if case:
        for path in (HOSTILE / case).iterdir():
            shutil.copy(path, folder / path.name.removesuffix(".hostile"))
    for module, source in modules.items():
        (folder / f"{module}.py").write_text(source)
    return folder


def upload(path) -> intake.Upload:
    """The upload batch makes of one path."""
    (made,) = intake.uploads([Path(path)])
    return made


def rows_of(csv_file: Path) -> list[dict]:
    with csv_file.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
@pytest.mark.posix("its hostile folders fork and run /bin/sleep")
def test_a_batch_of_eight_with_two_hostile_folders_gives_eight_rows(tmp_path, pristine):
    root = tmp_path / "submissions"
    root.mkdir()
    folders = [make(root, f"good{i}") for i in range(3)]
    folders += [make(root, f"stub{i}", base=pristine) for i in range(2)]
    folders.append(make(root, "broken", scores="def attention_scores(q, k)\n    return q\n"))
    folders.append(make(root, "kills_grader", case="kills_grader"))
    folders.append(make(root, "child_holds_pipes", case="child_holds_pipes"))
    csv_file = tmp_path / "grades.csv"
    started = time.time()
    result = CliRunner().invoke(
        main, ["batch", *map(str, folders), "--jobs", "2", "--csv", str(csv_file)]
    )
    assert result.exit_code == 0, result.output
    rows = {Path(r["folder"]).name: r for r in rows_of(csv_file)}
    assert len(rows) == 8 and list(rows_of(csv_file)[0]) == list(COLUMNS)
    for name in ("good0", "good1", "good2"):
        assert rows[name]["status"] == "passed" and rows[name]["total"] == "100.0"
    assert (
        rows["stub0"]["status"] == "graded"
        and rows["stub0"]["total"] == "0.0"
        and "not_started" in rows["stub0"]["reason"]
    )
    assert (
        rows["broken"]["status"] == "graded"
        and rows["broken"]["scores"] == "0.0"
        and rows["broken"]["softmax"] == "20.0"
    )
    # it cannot reach the grader: its wrong softmax is all that counts
    killer = rows["kills_grader"]
    assert (
        killer["status"] == "graded"
        and float(killer["softmax"]) < 20
        and killer["total"] == f"{80 + float(killer['softmax']):.1f}"
    )
    assert rows["child_holds_pipes"]["status"] == "passed"
    assert sleepers(("300", "301"), since=started) == []


@pytest.mark.slow
def test_a_hanging_submission_costs_only_its_own_row_within_the_bound(tmp_path):
    folder = make(tmp_path, "hangs", case="infinite_loop")
    csv_file = tmp_path / "grades.csv"
    start = time.monotonic()
    result = CliRunner().invoke(
        main, ["batch", str(folder), "--csv", str(csv_file), "--timeout", "4"]
    )
    assert time.monotonic() - start < allowed(15) and result.exit_code == 0, result.output
    (hung,) = rows_of(csv_file)
    assert (
        hung["status"] == "timeout"
        and "longer than 4 s" in hung["reason"]
        and float(hung["seconds"]) < 10
    )


@pytest.mark.slow
def test_a_rerun_skips_the_folders_already_in_the_csv(tmp_path, capsys, pristine):
    first, second = make(tmp_path, "first", base=pristine), make(tmp_path, "second", base=pristine)
    csv_file = tmp_path / "grades.csv"
    assert batch([first], jobs=1, csv_file=csv_file) == 0
    written = csv_file.read_text()
    assert batch([first], jobs=1, csv_file=csv_file) == 0
    assert csv_file.read_text() == written and "0 to grade, 1 already" in capsys.readouterr().out
    assert batch([first, second], jobs=1, csv_file=csv_file) == 0
    assert [Path(r["folder"]).name for r in rows_of(csv_file)] == ["first", "second"]


@pytest.mark.slow
@pytest.mark.posix("a folder name that is not UTF-8 is a POSIX file system's")
def test_folders_named_like_a_formula_or_not_in_utf8_get_one_inert_row_each_and_a_rerun_grades_neither_again(
    tmp_path, capsys, pristine
):
    # as Python reads a Latin-1 name
    names = ["=cmd|' -C calc'!A0", b"Jos\xe9".decode("utf-8", "surrogateescape")]
    folders = [make(tmp_path, name, base=pristine) for name in names]
    csv_file = tmp_path / "grades.csv"
    assert batch(folders, jobs=1, csv_file=csv_file) == 0
    written = csv_file.read_bytes()
    assert sorted(r["student"] for r in rows_of(csv_file)) == ["'=cmd|' -C calc'!A0", "Jos\\xe9"]
    assert batch(folders, jobs=1, csv_file=csv_file) == 0
    assert csv_file.read_bytes() == written and "0 to grade, 2 already" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.posix("kills the batch with SIGKILL, in a session of its own")
def test_a_killed_batch_leaves_a_whole_csv_and_the_rerun_completes(tmp_path, pristine):
    folders = [make(tmp_path, f"s{i}", base=pristine) for i in range(4)]
    csv_file = tmp_path / "grades.csv"
    command = [
        sys.executable,
        "-m",
        "grader",
        "batch",
        *map(str, folders),
        "--jobs",
        "1",
        "--csv",
        str(csv_file),
    ]
    # what a killed batch cannot remove stays here, not in the machine's /tmp
    scratch = tmp_path / "tmp"
    scratch.mkdir(mode=0o711)
    env = {**os.environ, "TMPDIR": str(scratch)}
    process = subprocess.Popen(
        command,
        cwd=KIT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not csv_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    started = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signal.SIGKILL)
    process.wait()
    end_processes(started)  # the check it was running: no one else is left to end it
    partial = rows_of(csv_file)
    assert 1 <= len(partial) < 4 and all(
        r["status"] == "graded" and r["total"] == "0.0" for r in partial
    )
    assert not list(tmp_path.glob(".grades.csv.*"))
    assert batch(folders, jobs=2, csv_file=csv_file) == 0
    assert sorted(Path(r["folder"]).name for r in rows_of(csv_file)) == ["s0", "s1", "s2", "s3"]


def test_rows_from_the_checks_json(tmp_path):
    result = tmp_path / "result.json"
    exercises = [
        {"name": name, "status": "passed", "points": 10.0, "max_points": 10.0, "checks": []}
        for name in NAMES
    ]
    exercises[2] = {
        "name": "softmax",
        "status": "error",
        "points": 0.0,
        "max_points": 20.0,
        "checks": [
            {
                "id": "softmax.rows",
                "status": "error",
                "message": "softmax did not return within 10 s\nmore",
            }
        ],
    }
    result.write_text(
        json.dumps({"total": {"points": 40.0, "max_points": 100.0}, "exercises": exercises})
    )
    graded = row(upload("/s"), 1, result, "", False, 300, 1)
    assert graded["status"] == "graded" and graded["softmax"] == "0.0" and graded["total"] == "40.0"
    assert graded["reason"] == "softmax error: softmax did not return within 10 s"
    assert (
        graded["exercise statuses"]
        == "scores:passed masking:passed softmax:error heads:passed training:passed"
    )
    # a check stopped by a hang is no failure of its property: its exercise says error
    assert graded["failed checks"] == ""
    result.write_text('{"total": ')  # a torn or missing result is an error, never a pass
    assert row(upload("/s"), 0, result, "last words\n", False, 300, 1)["status"] == "error"
    refused = row(
        upload("/s"), 2, tmp_path / "none.json", "Cannot check: no such folder\n", False, 300, 1
    )
    assert refused["reason"] == "Cannot check: no such folder"


def test_write_rows_replaces_the_file_in_one_step(tmp_path):
    csv_file = tmp_path / "grades.csv"
    write_rows(csv_file, [{"student": "a", "status": "passed"}])
    write_rows(
        csv_file, [{"student": "a", "status": "passed"}, {"student": "b", "status": "error"}]
    )
    assert [r["student"] for r in rows_of(csv_file)] == ["a", "b"]
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]


@pytest.mark.parametrize(
    "jobs, csv_name, message",
    [(0, "grades.csv", "--jobs"), (1, "missing/grades.csv", "does not exist")],
)
def test_usage_errors(tmp_path, capsys, jobs, csv_name, message):
    assert batch([tmp_path], jobs=jobs, csv_file=tmp_path / csv_name) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_nbgrader_folders_are_rows_keyed_by_student_with_each_files_sha256(tmp_path):
    course = tmp_path / "course" / "submitted"
    for student in ("ada", "grace"):
        shutil.copytree(
            SOLUTIONS_DIR,
            course / student / "attention-by-hand" / "exercises",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    csv_file = tmp_path / "grades.csv"
    result = CliRunner().invoke(
        main, ["batch", *map(str, course.glob("*/attention-by-hand")), "--csv", str(csv_file)]
    )
    assert result.exit_code == 0, result.output
    rows = {r["student"]: r for r in rows_of(csv_file)}
    # not a terminal: a line a minute, and the last
    assert sorted(rows) == ["ada", "grace"] and "2/2 graded (100%)" in result.output
    # gathered for the instructor, at the end
    copies = result.output.split("byte for byte the kit's reference solution (2):")[1]
    assert "ada: scores.py" in copies and "grace: scores.py" in copies
    digest = hashlib.sha256((SOLUTIONS_DIR / "softmax.py").read_bytes()).hexdigest()
    for found in rows.values():
        assert (
            found["folder"].endswith("attention-by-hand")
            and found["student id"] == found["student"]
        )
        assert found["softmax.py sha256"] == digest
        assert (
            found["isolation"] in ("namespaces", "user")
            and "reference solution, byte for byte" in found["reason"]
        )


@pytest.mark.slow
def test_without_isolation_batch_refuses_unless_told(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_BY_HAND_ISOLATION", "none")
    folder = write_stubs(tmp_path / "alice")
    csv_file = tmp_path / "grades.csv"
    refused = CliRunner().invoke(main, ["batch", str(folder), "--csv", str(csv_file)])
    assert (
        refused.exit_code == 2
        and "cannot confine the students' code" in refused.output
        and not csv_file.exists()
    )
    allowed = CliRunner().invoke(
        main, ["batch", str(folder), "--csv", str(csv_file), "--allow-unisolated"]
    )
    assert allowed.exit_code == 0, allowed.output
    assert [(r["student"], r["isolation"], r["total"]) for r in rows_of(csv_file)] == [
        ("alice", "none", "0.0")
    ]


@pytest.mark.slow
def test_a_rerun_regrades_a_row_whose_files_changed_and_says_so(tmp_path, capsys, pristine):
    folder = make(tmp_path, "late", base=pristine)
    csv_file = tmp_path / "grades.csv"
    assert batch([folder], jobs=1, csv_file=csv_file) == 0
    (before,) = rows_of(csv_file)
    shutil.copy(SOLUTIONS_DIR / "softmax.py", folder / "softmax.py")  # the late resubmission
    capsys.readouterr()
    assert batch([folder], jobs=1, csv_file=csv_file) == 0
    said = capsys.readouterr().out
    (after,) = rows_of(csv_file)
    assert (
        "1 to grade, 0 already" in said
        and "Regrading 1 whose files changed since their row: late" in said
    )
    assert before["softmax"] == "0.0" and after["softmax"] == "20.0"
    assert (
        after["softmax.py sha256"]
        == hashlib.sha256((SOLUTIONS_DIR / "softmax.py").read_bytes()).hexdigest()
    )
    assert after["scores.py sha256"] == before["scores.py sha256"] != ""


def test_force_regrades_every_folder_and_regrade_the_named_ones(tmp_path, pristine):
    from grader.course.batch import file_hashes, plan

    folders = intake.uploads(
        make(tmp_path, name, base=pristine) for name in ("one", "two", "three")
    )
    kept = [{"student": rows.key(f), **file_hashes(f)} for f in folders]
    assert plan(folders, kept, force=False, named=set()) == ([], [])
    assert plan(folders, kept, force=True, named=set()) == (folders, [])
    assert plan(folders, kept, force=False, named={"two"}) == ([folders[1]], [])
    (tmp_path / "three" / "heads.py").write_text("# changed\n")
    assert plan(folders, kept, force=False, named=set()) == ([folders[2]], [folders[2]])
    kept[0]["scores.py sha256"] = ""  # a row from before the sha256 columns: graded again
    assert plan(folders, kept, force=False, named=set())[0] == [folders[0], folders[2]]


@pytest.mark.slow
def test_the_regrade_option_grades_the_named_folder_again(tmp_path, pristine):
    folder = make(tmp_path, "again", base=pristine)
    csv_file = tmp_path / "grades.csv"
    assert batch([folder], jobs=1, csv_file=csv_file) == 0
    result = CliRunner().invoke(
        main, ["batch", str(folder), "--csv", str(csv_file), "--regrade", str(folder)]
    )
    assert result.exit_code == 0 and "1 to grade, 0 already" in result.output, result.output
    assert len(rows_of(csv_file)) == 1


@pytest.mark.slow
def test_force_regrades_every_row_with_the_settings_of_now(tmp_path, pristine, monkeypatch):
    from grader.check.results import SCORING_VAR

    # partial points; the option below sets it for this test only
    monkeypatch.setenv(SCORING_VAR, "")
    overflowing = (HOSTILE.parent / "mutants" / "wrong" / "softmax__no_max_shift.py").read_text()
    folders = [
        str(make(tmp_path, "stub", base=pristine)),
        str(make(tmp_path, "naive", softmax=overflowing)),
    ]
    csv_file = tmp_path / "grades.csv"
    assert CliRunner().invoke(main, ["batch", *folders, "--csv", str(csv_file)]).exit_code == 0
    before = {Path(r["folder"]).name: r for r in rows_of(csv_file)}
    again = CliRunner().invoke(
        main, ["batch", *folders, "--csv", str(csv_file), "--force", "--all-or-nothing"]
    )
    assert again.exit_code == 0 and "2 to grade (--force: every folder" in again.output, (
        again.output
    )
    after = {Path(r["folder"]).name: r for r in rows_of(csv_file)}
    assert (
        0 < float(before["naive"]["softmax"]) < 20
        and after["naive"]["softmax"] == "0.0"
        and after["naive"]["total"] == "80.0"
    )
    assert sorted(after) == ["naive", "stub"] and after["stub"]["total"] == "0.0"


def test_a_row_the_grader_failed_on_is_no_grade_and_the_next_run_regrades_it(tmp_path):
    """A check ended by the grader's own fault gives the row status fault, said as such, and a rerun grades it again."""
    report = {
        "exercises": [
            {
                "name": "scores",
                "status": "error",
                "points": 0.0,
                "files": {},
                "checks": [
                    {
                        "id": "scores.matches_reference",
                        "status": "error",
                        "message": "The grader could not finish this check.",
                        "fault": "grader",
                    },
                ],
            },
        ],
        "total": {"points": 0.0},
    }
    result = tmp_path / "result.json"
    result.write_text(json.dumps(report), encoding="utf-8")
    ada = upload(tmp_path / "ada")
    faulted = rows.raw_row(ada, 1, result, "", False, 60.0, 2.0)
    assert (
        faulted["status"] == "fault"
        and "could not finish" in faulted["reason"]
        and "fault in the grader" in batches.said(faulted)
    )
    assert batches.plan([ada], [faulted], False, set()) == ([ada], [])
