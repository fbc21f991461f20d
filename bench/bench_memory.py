"""The grader's peak memory while it grades: honest heads and training, and each attack in tests/attacks/.

Usage: python bench/bench_memory.py [KIT_ROOT] [--runs N] [--cap MIB] [--honest-only]
Each case is one `grader check EXERCISE --submission FOLDER` of KIT_ROOT's grader (default: this kit),
run from a scratch folder with KIT_ROOT on PYTHONPATH. Its whole process tree (the grader, the
reference helper, the worker and all they start) is sampled with psutil every 20 ms: the peak of the
tree's summed RSS (shared pages count once per process, so forks over-count), of its largest process
and of the grader's own. A tree past --cap MiB (default 4096) is killed, so that an old grader cannot
take the machine, and shown as "> cap". The attacks are this kit's, put into KIT_ROOT's own stubs, so
two kits are measured on the same attacks. Honest cases run --runs times (default 3): median wall
seconds and points per exercise, the red team's honest baseline. The load average is printed before
and after.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parents[1]
ATTACKS = HERE / "tests" / "attacks"
HONEST = ("heads", "training")
SAMPLE = 0.02  # seconds between samples
TIMEOUT = 600.0  # seconds one check may take here
STUBS = "import sys; from pathlib import Path; from grader.course.stubs import write_stubs; write_stubs(Path(sys.argv[1]))"


def peak(process: subprocess.Popen, cap: int, found: dict) -> None:
    """Thread: the largest summed RSS of the process and all it started, of one process and of the grader's own; kills past cap."""
    root, total, single, own = psutil.Process(process.pid), 0, 0, 0
    while process.poll() is None:
        try:
            sizes = [p.memory_info().rss for p in [root, *root.children(recursive=True)]]
        except psutil.Error:
            sizes = []
        total, single, own = max(total, sum(sizes)), max([single, *sizes]), max([own, *sizes[:1]])
        if total > cap:
            found["killed"] = True
            kill_tree(root)
            break
        time.sleep(SAMPLE)
    found.update(total=total, single=single, own=own)


def kill_tree(root: psutil.Process) -> None:
    """Kill the process and everything it started, children first."""
    try:
        processes = [*root.children(recursive=True), root]
    except psutil.Error:
        return
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            pass


def grade(kit: Path, scratch: Path, exercise: str, folder: Path, cap: int) -> dict:
    """One check of folder's exercise by kit's grader: exit status, seconds, peaks, points, and the output's tail."""
    json_file = scratch / "check.json"
    json_file.unlink(missing_ok=True)
    argv = [
        sys.executable,
        "-m",
        "grader",
        "check",
        exercise,
        "--submission",
        str(folder),
        "--json",
        str(json_file),
    ]
    env = {**os.environ, "PYTHONPATH": str(kit)}
    found: dict = {"killed": False}
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    watcher = threading.Thread(target=peak, args=(process, cap, found))
    watcher.start()
    try:
        out = process.communicate(timeout=TIMEOUT)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        kill_tree(psutil.Process(process.pid))
        out = (
            process.communicate()[0].decode(errors="replace")
            + f"\n(stopped by the bench after {TIMEOUT:g} s)"
        )
    watcher.join()
    found.update(
        seconds=time.perf_counter() - start,
        code=process.returncode,
        out=out,
        points=points(json_file),
    )
    return found


def points(json_file: Path) -> dict:
    """Points per exercise from the check's JSON ({} when it wrote none)."""
    try:
        return {
            e["name"]: e["points"]
            for e in json.loads(json_file.read_text(encoding="utf-8"))["exercises"]
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def stubs(kit: Path, folder: Path) -> Path:
    """kit's own stubs in folder."""
    subprocess.run(
        [sys.executable, "-c", STUBS, str(folder)],
        env={**os.environ, "PYTHONPATH": str(kit)},
        check=True,
    )
    return folder


def attack_folder(kit: Path, scratch: Path, path: Path) -> tuple[str, Path]:
    """(the attacked module, kit's stubs with that module replaced by the attack)."""
    module = path.read_text(encoding="utf-8").splitlines()[0].removeprefix("# module: ").strip()
    folder = stubs(kit, scratch / "attacks" / path.stem)
    (folder / f"{module}.py").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return module, folder


def mib(size: int) -> str:
    return f"{size / (1 << 20):7.0f}"


def shown(result: dict, cap: int) -> str:
    """A case's peaks, as a table's cells."""
    if result["killed"]:
        return f"{'> ' + str(cap >> 20):>7} {mib(result['single'])} {mib(result['own'])}"
    return f"{mib(result['total'])} {mib(result['single'])} {mib(result['own'])}"


def verdict(result: dict) -> str:
    """What the check said, in a few words: points, exit status, and whether it blamed itself."""
    fault = " FAULT IN THE GRADER" if "fault in the grader" in result["out"] else ""
    said = " ".join(f"{name}={value:g}" for name, value in result["points"].items()) or "no JSON"
    return f"exit {result['code']}, {said}{fault}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "kit", nargs="?", type=Path, default=HERE, help="the kit root whose grader is measured"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each honest case")
    parser.add_argument(
        "--cap", type=int, default=4096, help="MiB past which a check's tree is killed"
    )
    parser.add_argument(
        "--honest-only",
        action="store_true",
        help="the honest cases only (for timing two kits in turn)",
    )
    options = parser.parse_args()
    kit, cap = options.kit.resolve(), options.cap << 20
    head = subprocess.run(
        ["git", "-C", str(kit), "log", "-1", "--format=%h %s"], capture_output=True, text=True
    ).stdout.strip()
    print(f"kit: {kit} at {head[:100]}")
    print(f"load average before: {load()} on {os.cpu_count()} cores; attacks from {ATTACKS}")
    print(f"{'case':<34} {'tree':>7} {'largest':>7} {'grader':>7} {'seconds':>8}  verdict")
    print(
        "(MiB: the peak of the tree's summed RSS, of its largest process, of the grader's own process)"
    )
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as name:
        scratch = Path(name)
        honest = scratch / "honest"
        shutil.copytree(kit / "solutions", honest, ignore=shutil.ignore_patterns("__pycache__"))
        for exercise in HONEST:
            runs = [grade(kit, scratch, exercise, honest, cap) for _ in range(options.runs)]
            top = max(runs, key=lambda r: (r["killed"], r["total"]))
            seconds = statistics.median(r["seconds"] for r in runs)
            times = ", ".join(f"{r['seconds']:.2f}" for r in runs)
            print(
                f"{'honest ' + exercise:<34} {shown(top, cap)} {seconds:8.2f}  {verdict(top)}  (median of {times})"
            )
        for path in [] if options.honest_only else sorted(ATTACKS.glob("*.py")):
            module, folder = attack_folder(kit, scratch, path)
            result = grade(kit, scratch, module, folder, cap)
            print(
                f"{path.stem + ' (' + module + ')':<34} {shown(result, cap)} {result['seconds']:8.2f}  {verdict(result)}",
                flush=True,
            )
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
