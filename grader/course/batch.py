"""`grader batch`: grade many submission folders in parallel, one CSV row each, resumable."""

import csv
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import click

from grader.exercises import NAMES
from grader.paths import KIT_ROOT
from grader.sandbox.process import RUN_VAR, end_tree, kill_marked, new_session

COLUMNS = ("folder", "status", *NAMES, "total", "seconds", "reason")
SUBMISSION_SECONDS = 300.0  # the most one submission may take, whatever it does


def batch(dirs, jobs: int = 2, csv_file: Path = Path("grades.csv"), timeout: float = SUBMISSION_SECONDS) -> int:
    """Grade every folder not yet in the CSV, jobs at a time; 0 when every folder has its row."""
    csv_file = Path(csv_file)
    if jobs < 1:
        click.echo("--jobs must be at least 1.", err=True)
        return 2
    if not csv_file.parent.is_dir():
        click.echo(f"{csv_file.parent} does not exist: create it or choose another --csv path.", err=True)
        return 2
    folders = list(dict.fromkeys(str(Path(d).resolve()) for d in dirs))
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
                click.echo(f"[{count}/{len(todo)}] {Path(row['folder']).name}: {row['status']}, {row['total']} points")
    except KeyboardInterrupt:
        running.stop_all()
        click.echo(f"Stopped; {csv_file} keeps the rows written so far, and a rerun resumes.", err=True)
        return 130
    return 0


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
        cells = row(str(folder), returncode, result, output, timed_out, timeout, seconds)
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
        command, cwd=result.parent, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
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


def row(folder, returncode, result: Path, output: str, timed_out: bool, timeout: float, seconds: float) -> dict:
    """The CSV row for one finished `grader check`."""
    empty = {name: "" for name in NAMES}
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
    if timed_out:
        return {"folder": folder, "status": "timeout", **empty, "total": "0.0",
                "reason": f"grading took longer than {timeout:g} s and was stopped"}
    if returncode == 2 and not result.exists():
        return {"folder": folder, "status": "unreadable", **empty, "total": "0.0", "reason": last[:300]}
    try:
        report = json.loads(result.read_text())
        points = {e["name"]: float(e["points"]) for e in report["exercises"]}
        statuses = {e["name"]: e["status"] for e in report["exercises"]}
        total = float(report["total"]["points"])
    except (OSError, ValueError, KeyError, TypeError):
        how = f"killed by {signal.Signals(-returncode).name}" if returncode and returncode < 0 else f"exit status {returncode}"
        return {"folder": folder, "status": "error", **empty, "total": "0.0",
                "reason": f"the grader stopped without a result ({how}) after {seconds:.0f} s, perhaps stopped by the submission itself; "
                f"run grader check on it alone. {last[:200]}".strip()}
    missing = [name for name in NAMES if name not in points]
    not_passed = [f"{name} {statuses[name]}{why(report, name)}" for name in NAMES if statuses.get(name, "passed") != "passed"]
    status = "passed" if not missing and not not_passed else "graded"
    reason = "; ".join(not_passed + [f"{name} not checked" for name in missing])
    cells = {name: f"{points[name]:.1f}" if name in points else "" for name in NAMES}
    return {"folder": folder, "status": status, **cells, "total": f"{total:.1f}", "reason": reason}


def why(report: dict, name: str) -> str:
    """The first line of the exercise's first check that did not pass, to say what went wrong."""
    for exercise in report["exercises"]:
        if exercise["name"] == name:
            for check in exercise.get("checks", []):
                if check.get("status") != "passed" and check.get("message"):
                    return ": " + str(check["message"]).splitlines()[0][:120]
    return ""


def read_rows(csv_file: Path) -> list[dict]:
    """The rows already written, so a rerun skips their folders."""
    if not csv_file.exists():
        return []
    with csv_file.open(newline="") as f:
        return [dict(r) for r in csv.DictReader(f) if r.get("folder")]


def write_rows(csv_file: Path, rows: list[dict]) -> None:
    """Write all rows to a temporary file beside the CSV, then put it in place in one step."""
    temporary = csv_file.with_name(f".{csv_file.name}.{os.getpid()}.tmp")
    with temporary.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, csv_file)


def _kill_group(process: subprocess.Popen) -> None:
    """Kill a check and every process below it."""
    end_tree(process)
