"""Throughput of `grader batch` on 40 submissions at --jobs 2, in each isolation, next to nbgrader autograde.

Usage: python3 bench/bench_batch.py [JOBS]   (default 2)

The 40: 20 correct, 8 untouched stubs, 7 with a known mistake or a syntax error, and 5 hostile
(a hang, a crash, one that kills its grader, 64 MB of output, children left behind). The batch
runs once in each isolation this machine offers (none with --allow-unisolated). nbgrader is
timed with this interpreter when it has nbgrader (else $NBGRADER_PYTHON, else the reason is
printed): the 35 others in one autograde run, then each hostile one alone, stopped after 120 s.
"""

import csv
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import machine

from grader.course.stubs import write_stubs
from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.sandbox import isolation

NBGRADER_PYTHON = Path(os.environ.get("NBGRADER_PYTHON", sys.executable))
ASSIGNMENT = "attention-by-hand"
HOSTILE = KIT_ROOT / "tests" / "hostile"
MISTAKES = {  # module: (the reference's text, the mistake)
    "scores": ("/ np.sqrt(d)", ""),
    "softmax": ("np.exp(x - top)", "np.exp(x)"),
    "masking": ("np.tril(", "np.triu("),
    "heads": ("apply_causal_mask(attention_scores(q, k))", "attention_scores(q, k)"),
    "training": ("params[name] - lr", "params[name] + lr"),
}
HOSTILE_CASES = (
    "infinite_loop",
    "os_exit_in_call",
    "kills_grader",
    "prints_64mb",
    "child_holds_pipes",
)
HOSTILE_SECONDS = 120  # how long nbgrader may spend on one hostile submission here


def copy(base: Path, folder: Path) -> Path:
    """A copy of the five modules of base."""
    shutil.copytree(base, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def submissions(root: Path) -> dict[str, Path]:
    """The 40 submission folders, by a label saying what each is."""
    folders = {f"correct{i:02d}": copy(SOLUTIONS_DIR, root / f"correct{i:02d}") for i in range(20)}
    # pristine, whatever exercises/ holds
    folders |= {f"stub{i}": write_stubs(root / f"stub{i}") for i in range(8)}
    for module, (right, wrong) in MISTAKES.items():
        folder = copy(SOLUTIONS_DIR, root / f"wrong_{module}")
        path = folder / f"{module}.py"
        path.write_text(path.read_text().replace(right, wrong))
        folders[folder.name] = folder
    folder = copy(SOLUTIONS_DIR, root / "syntax_error")
    (folder / "masking.py").write_text("def causal_mask(T)\n    return T\n")
    folders[folder.name] = folder
    folder = copy(SOLUTIONS_DIR, root / "wrong_softmax_backward")
    path = folder / "training.py"
    path.write_text(path.read_text().replace("shares * (d_shares - dot)", "shares * d_shares"))
    folders[folder.name] = folder
    for case in HOSTILE_CASES:
        folder = copy(SOLUTIONS_DIR, root / case)
        for path in (HOSTILE / case).iterdir():
            shutil.copy(path, folder / path.name.removesuffix(".hostile"))
        folders[case] = folder
    assert len(folders) == 40
    return folders


def time_kit(folders: dict[str, Path], jobs: int, work: Path, tier: str) -> None:
    """Run grader batch in one isolation and print its throughput, median time per submission and the statuses."""
    csv_file = work / f"grades-{tier}.csv"
    start = time.perf_counter()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            *map(str, folders.values()),
            "--jobs",
            str(jobs),
            "--csv",
            str(csv_file),
            "--allow-unisolated",
        ],
        capture_output=True,
        text=True,
        cwd=work,
        env={**os.environ, isolation.TIER_VAR: tier},
    )
    seconds = time.perf_counter() - start
    with csv_file.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    median = statistics.median(float(r["seconds"]) for r in rows)
    print(
        f"grader batch --jobs {jobs}, isolation {tier}: {len(rows)} rows for {len(folders)} submissions in {seconds:.1f} s "
        f"(exit status {run.returncode}): {60 * len(rows) / seconds:.1f} submissions per minute, "
        f"median {median:.1f} s per submission"
    )
    print("  statuses:", dict(Counter(r["status"] for r in rows)))
    for r in rows:
        if Path(r["folder"]).name in HOSTILE_CASES:
            print(
                f"  {Path(r['folder']).name}: {r['status']}, {r['total']} points, {r['seconds']} s; {r['reason'][:90]}"
            )


def nbgrader_missing() -> str | None:
    """Why nbgrader cannot be timed here, or None."""
    if not NBGRADER_PYTHON.exists():
        return f"{NBGRADER_PYTHON} does not exist"
    probe = subprocess.run(
        [str(NBGRADER_PYTHON), "-c", "import nbgrader, grader.course.nbgrader.assignment"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"nbgrader or the kit cannot be imported there: {probe.stderr.strip().splitlines()[-1:]}"
    return None


def nbgrader_env(course: Path) -> dict[str, str]:
    """The environment nbgrader runs in: its interpreter's scripts first, Jupyter's config beside the course."""
    env = dict(os.environ, PATH=f"{NBGRADER_PYTHON.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env["JUPYTER_CONFIG_DIR"] = str(course.parent / "jupyter-config")
    return env


def nbgrader(course: Path, *args: str, timeout: float | None = None) -> tuple[int | None, float]:
    """Run an nbgrader command in the course with nbgrader's own interpreter; exit status (None if
    stopped at the timeout) and seconds taken."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [str(NBGRADER_PYTHON), "-m", "nbgrader", *args],
        cwd=course,
        env=nbgrader_env(course),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        status = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        status = None
    return status, time.perf_counter() - start


def submit(course: Path, label: str, folder: Path) -> str:
    """Put a submission into nbgrader's submitted/ folder, as the released files with its modules; its id."""
    student = label.replace("_", "")
    submitted = course / "submitted" / student / ASSIGNMENT
    shutil.copytree(course / "release" / ASSIGNMENT, submitted)
    for path in folder.glob("*.py"):
        shutil.copy(path, submitted / "exercises" / path.name)
    return student


def time_nbgrader(folders: dict[str, Path], work: Path) -> None:
    """Autograde the same submissions with nbgrader: the well-behaved ones in one run, each hostile one
    alone with a time bound (its lesson cells run the student's code in the kernel)."""
    why = nbgrader_missing()
    if why:
        print(f"nbgrader autograde: skipped, {why}")
        return
    course = work / "course"
    export = subprocess.run(
        [str(NBGRADER_PYTHON), "-m", "grader", "nbgrader", str(course)],
        capture_output=True,
        text=True,
        cwd=work,
    )
    if export.returncode != 0:
        print(
            f"nbgrader autograde: skipped, grader nbgrader failed: {(export.stdout + export.stderr).strip()[-300:]}"
        )
        return
    if nbgrader(course, "generate_assignment", ASSIGNMENT)[0] != 0:
        print("nbgrader autograde: skipped, generate_assignment failed")
        return
    calm = {label: folder for label, folder in folders.items() if label not in HOSTILE_CASES}
    for label, folder in calm.items():
        submit(course, label, folder)
    status, seconds = nbgrader(course, "autograde", ASSIGNMENT)
    graded = len(list((course / "autograded").glob(f"*/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")))
    print(
        f"nbgrader autograde: {graded} of {len(calm)} non-hostile submissions in {seconds:.1f} s (exit status {status}): "
        f"{60 * len(calm) / seconds:.1f} submissions per minute, {seconds / len(calm):.1f} s each"
    )
    for case in HOSTILE_CASES:
        student = submit(course, case, folders[case])
        status, seconds = nbgrader(
            course, "autograde", ASSIGNMENT, "--student", student, timeout=HOSTILE_SECONDS
        )
        outcome = (
            f"exit status {status}" if status is not None else f"stopped after {HOSTILE_SECONDS} s"
        )
        print(f"  {case} alone: {outcome}, {seconds:.1f} s")


def main(jobs: int) -> None:
    """Build the 40 submissions in a temporary folder, then time the kit and nbgrader on them."""
    print(f"load average before: {machine.load()} on {os.cpu_count()} cores", flush=True)
    ticks = machine.cpu_times()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as scratch:
        work = Path(scratch)
        folders = submissions(work / "submissions")
        for tier in [tier for tier in isolation.TIERS if not isolation.why_not(tier)]:
            time_kit(folders, jobs, work, tier)
        time_nbgrader(folders, work)
    print(f"load average after: {machine.load()}; {machine.stolen(ticks, machine.cpu_times())}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
