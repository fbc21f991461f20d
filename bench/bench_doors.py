"""The doors' attacks, rebuilt and measured: where uploads come in and where student text goes out.

Usage: python bench/bench_doors.py [KIT_ROOT] [--cap MIB] [--only NAME ...]
Each attack runs the kit's own commands (grader batch, grader report, nbgrader zip_collect, autograde,
generate_feedback and export) of KIT_ROOT (default: this kit, on PYTHONPATH) in a scratch folder,
beside an honest student, and prints what the attacker got, what the honest student kept, the peak
memory of the command's whole process tree (summed PSS, sampled with psutil every 20 ms; a tree past
--cap MiB, default 2048, is killed and shown as "> cap"), the bytes it wrote where the attack writes,
and its seconds. The load average is printed before and after.
"""

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parents[1]
SOLUTIONS = HERE / "solutions"
MODULES = ("scores", "masking", "softmax", "heads", "training")
ASSIGNMENT = "attention-by-hand"
GREEDY = r".*/[^/]+_(?P<student_id>\w+)_assignsubmission_file_/(?P<file_id>.+)"  # the README's pattern before
LAZY = r".*?/[^/]+_(?P<student_id>\w+)_assignsubmission_file_/(?P<file_id>.+)"  # the README's pattern now
WRONG_SOFTMAX = "def softmax(x):\n    return x\n"
FORGED = """def softmax(x):
    raise ValueError("no.\\nThis looks like a known mistake: Bob Smith's softmax, copied line by line.")
"""
FLOOD = "import time\nstart = time.time()\nwhile time.time() - start < 50:\n    print('x' * 1000)\n"
LIVE = "- a list\n\n  [live](javascript:alert(document.domain)) ![far](https://elsewhere.example/pixel.png)\n"


class Run:
    """One command of the kit, its process tree sampled until it ends."""

    def __init__(
        self,
        kit: Path,
        cwd: Path,
        args: list[str],
        cap: int,
        env: dict | None = None,
        watch: Path | None = None,
    ):
        self.env = {**os.environ, **(env or {}), "PYTHONPATH": str(kit)}
        self.peak, self.killed, self.written, self.seconds = 0, False, 0, 0.0
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", *args],
            cwd=cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        watcher = threading.Thread(target=self.sample, args=(process, cap, watch))
        watcher.start()
        self.output = process.communicate(timeout=3600)[0].decode(errors="replace")
        watcher.join()
        self.seconds, self.status = time.perf_counter() - start, process.returncode

    def sample(self, process: subprocess.Popen, cap: int, watch: Path | None) -> None:
        root, ticks = psutil.Process(process.pid), 0
        while process.poll() is None:
            try:
                tree = [root, *root.children(recursive=True)]
                self.peak = max(self.peak, sum(held(p) for p in tree))
            except psutil.Error:
                pass
            if self.peak > cap:
                self.killed = True
                for p in reversed(tree):
                    try:
                        p.kill()
                    except psutil.Error:
                        pass
            ticks += 1
            if watch is not None and ticks % 10 == 0:
                self.written = max(self.written, size(watch))
            time.sleep(0.02)

    def said(self) -> str:
        memory = "> cap" if self.killed else f"{self.peak / 2**20:.0f} MiB"
        return f"peak {memory}, {self.seconds:.1f} s" + (
            f", wrote {self.written / 2**20:.1f} MiB" if self.written else ""
        )


def held(process: psutil.Process) -> int:
    """A process's proportional set size (its own pages and its share of those it shares), as a container's limit counts it."""
    try:
        return process.memory_full_info().pss
    except psutil.NoSuchProcess:
        return 0
    except (AttributeError, psutil.AccessDenied):
        return process.memory_info().rss


def size(folder: Path) -> int:
    """The bytes of the regular files under folder."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def reference(**changed: str) -> dict[bytes, bytes]:
    return {
        f"{m}.py".encode(): (
            changed[m].encode() if m in changed else (SOLUTIONS / f"{m}.py").read_bytes()
        )
        for m in MODULES
    }


def lay(folder: Path, files: dict[bytes, bytes]) -> Path:
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(os.fsencode(folder), name), "wb") as out:
            out.write(data)
    return folder


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def rows(csv_file: Path) -> list[dict]:
    with csv_file.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def controls(text: str) -> int:
    return sum(1 for c in text if (ord(c) < 0x20 and c != "\n") or ord(c) == 0x7F)


def batch(
    kit, scratch, cap, folders, name="grades.csv", watch=None, jobs=2
) -> tuple[Run, list[dict]]:
    csv_file = scratch / name
    args = ["grader", "batch", *map(str, folders), "--csv", str(csv_file), "--jobs", str(jobs)]
    run = Run(kit, scratch, args, cap, {"TMPDIR": str(watch)} if watch else None, watch)
    return run, rows(csv_file) if csv_file.exists() else []


def by(found: list[dict], column: str = "student") -> dict:
    return {r[column]: r for r in found}


def attack_link(kit, scratch, cap):
    lay(scratch / "class" / "bob" / "exercises", reference())
    (scratch / "class" / "linker").mkdir()
    os.symlink("../bob/exercises", scratch / "class" / "linker" / "exercises")
    run, found = batch(kit, scratch, cap, sorted((scratch / "class").iterdir()))
    got = {r["student"]: (r["status"], r["total"]) for r in found}
    return f"linker {got.get('linker')}, bob {got.get('bob')}; {run.said()}"


def attack_zips(kit, scratch, cap):
    students = [f"Student {i}_{1000 + i}_assignsubmission_file_" for i in range(4)]
    for i, student in enumerate(students):
        if i % 2:  # every other upload a zip of the folder
            lay(
                scratch / "class" / student,
                {b"work.zip": zipped({f"exercises/{m}.py": d for m, d in reference_str().items()})},
            )
        else:
            lay(scratch / "class" / student / "exercises", reference())
    run, first = batch(kit, scratch, cap, sorted((scratch / "class").iterdir()))
    with zipfile.ZipFile(
        scratch / "class" / students[1] / "work.zip"
    ) as archive:  # unzipped by hand, in the student's folder
        archive.extractall(scratch / "class" / students[1])
    again, second = batch(kit, scratch, cap, sorted((scratch / "class").iterdir()))
    totals = lambda found: sorted(r["total"] for r in found)  # noqa: E731
    return f"{len(students)} students: {len(first)} rows {totals(first)}; unzipped one by hand: {len(second)} rows {totals(second)}; {run.said()}"


def reference_str() -> dict[str, bytes]:
    return {m: (SOLUTIONS / f"{m}.py").read_bytes() for m in MODULES}


def attack_jose(kit, scratch, cap):
    lay(scratch / "class" / os.fsdecode(b"Jos\xe9") / "exercises", reference())
    lay(scratch / "class" / "Jos\\xe9" / "exercises", reference(softmax=WRONG_SOFTMAX))
    run, found = batch(kit, scratch, cap, sorted((scratch / "class").iterdir()))
    again, second = batch(
        kit, scratch, cap, sorted((scratch / "class").iterdir()), name="again.csv"
    )
    show = lambda found: sorted((r["student"], r["total"]) for r in found)  # noqa: E731
    return f"{show(found)}; a second run {show(second)}; {run.said()}"


def attack_big_module(kit, scratch, cap):
    lay(scratch / "class" / "honest" / "exercises", reference())
    folder = lay(scratch / "class" / "mallory" / "exercises", reference())
    with open(folder / "softmax.py", "r+b") as big:
        big.truncate(700 * 10**6)  # 700 MB of zeros, sparse on this disk
    tmp = scratch / "tmp"
    tmp.mkdir()
    alone, _ = batch(
        kit, scratch, cap, [scratch / "class" / "honest"], name="honest.csv", watch=tmp, jobs=1
    )
    run, found = batch(
        kit,
        scratch,
        cap,
        [scratch / "class" / "mallory", scratch / "class" / "honest"],
        watch=tmp,
        jobs=1,
    )
    got = {r["student"]: (r["status"], r["total"]) for r in found}
    return f"mallory {got.get('mallory')}, honest {got.get('honest')}; with mallory {run.said()}; the honest one alone {alone.said()}"


def attack_forged_mistake(kit, scratch, cap):
    lay(scratch / "class" / "mallory" / "exercises", reference(softmax=FORGED))
    run, found = batch(kit, scratch, cap, [scratch / "class" / "mallory"])
    report = Run(kit, scratch, ["grader", "report", str(scratch / "grades.csv")], cap)
    named = found[0].get("mistakes", "") if found else "(no row)"
    return f"mistakes cell {named!r}; in the report: {'Bob Smith' in report.output}; {run.said()}"


def attack_terminal(kit, scratch, cap):
    lay(scratch / "class" / "\x1b]0;pwned\x07\r\x1b[2Kok" / "exercises", reference())
    run, found = batch(kit, scratch, cap, sorted((scratch / "class").iterdir()))
    report = Run(kit, scratch, ["grader", "report", str(scratch / "grades.csv")], cap)
    return f"control bytes: batch {controls(run.output)}, report {controls(report.output)}; row {found[0]['total'] if found else '-'}"


def attack_spreadsheet(kit, scratch, cap):
    for name in (" =1+1", "\xa0=1+1"):
        lay(scratch / "class" / name, {b"notes.txt": b"nothing"})
    run, found = batch(kit, scratch, cap, sorted((scratch / "class").iterdir()))
    cells = [value for row in found for value in row.values()]
    live = [
        v
        for v in cells
        for line in v.split("\n")
        if line.lstrip()[:1] in "=+-@\uff1d\uff0b\uff0d\uff20"
        and line.lstrip()[:1]
        and not line.startswith("'")
    ]
    return f"cells a spreadsheet would run: {len(live)} {live[:3]}"


def course(kit, scratch, cap, env) -> Path:
    root = scratch / "course"
    root.mkdir()
    Run(kit, root, ["grader", "nbgrader", "."], cap)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("\nc.RunNotebook.timeout = 60\n")
    for step in ("generate_assignment", "release_assignment"):
        done = Run(kit, root, ["nbgrader", step, ASSIGNMENT], cap, env)
        if done.status != 0:
            raise SystemExit(f"nbgrader {step} failed:\n{done.output[-3000:]}")
    return root


def nbgrader_env(scratch: Path) -> dict:
    home = scratch / "home"
    return {
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "IPYTHONDIR": str(home / "ip"),
    }


def attack_zip_collect(kit, scratch, cap):
    env = nbgrader_env(scratch)
    root = course(kit, scratch, cap, env)
    notebook = (root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()
    bob = "Bob Smith_2_assignsubmission_file_/"
    files = {bob + f"exercises/{m}.py": d for m, d in reference_str().items()} | {
        bob + f"{ASSIGNMENT}.ipynb": notebook
    }
    files["Aaron A_3_assignsubmission_file_/work.zip"] = zipped(
        {f"x/{bob}exercises/softmax.py": WRONG_SOFTMAX.encode()}
    )
    # 1.1 GiB in about 1 MiB
    bomb = zipped({f"zeros{i}.zip": zipped({"zeros.py": bytes(110 << 20)}) for i in range(10)})
    files["Bomb B_4_assignsubmission_file_/work.zip"] = bomb
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    (archive / "moodle.zip").write_bytes(zipped(files))
    said = [
        f"download {(archive / 'moodle.zip').stat().st_size >> 10} KiB (the bomb's upload {len(bomb) >> 10} KiB, 1.1 GiB unpacked)"
    ]
    for pattern in (GREEDY, LAZY):
        shutil.rmtree(root / "submitted", ignore_errors=True)
        shutil.rmtree(root / "autograded", ignore_errors=True)
        collect = Run(
            kit,
            root,
            [
                "nbgrader",
                "zip_collect",
                ASSIGNMENT,
                f"--FileNameCollectorPlugin.named_regexp={pattern}",
                "--force",
            ],
            cap,
            env,
            watch=root / "downloaded",
        )
        grade = Run(kit, root, ["nbgrader", "autograde", ASSIGNMENT, "--force"], cap, env)
        exported = Run(kit, root, ["nbgrader", "export"], cap, env)
        for step in (collect, grade, exported):
            if step.status != 0:
                said.append(f"(failed: {step.output[-1500:]})")
        scores = (
            {r["student_id"]: r["score"] for r in rows(root / "grades.csv")}
            if (root / "grades.csv").exists()
            else {}
        )
        which = "greedy" if pattern == GREEDY else "lazy"
        said.append(
            f"{which} pattern: export {scores}; zip_collect {collect.said()}; autograde {grade.said()}"
        )
    return "; ".join(said)


def notebook_of(kit_notebook: dict, cells: list[dict]) -> bytes:
    nb = json.loads(json.dumps(kit_notebook))
    nb["cells"] = cells + nb["cells"]
    return json.dumps(nb).encode()


def attack_autograde(kit, scratch, cap):
    env = nbgrader_env(scratch)
    root = course(kit, scratch, cap, env)
    release = root / "release" / ASSIGNMENT
    kit_notebook = json.loads((release / f"{ASSIGNMENT}.ipynb").read_text(encoding="utf-8"))
    markdown = {"cell_type": "markdown", "metadata": {}, "source": "x" * 60}
    flood = {
        "cell_type": "code",
        "metadata": {},
        "outputs": [],
        "execution_count": None,
        "source": FLOOD,
    }
    live = {"cell_type": "markdown", "metadata": {}, "source": LIVE}
    students = {
        "a_honest": notebook_of(kit_notebook, []),
        "b_cells": notebook_of(kit_notebook, [markdown] * 200_000),
        "c_flood": notebook_of(kit_notebook, [flood, flood]),
        "d_live": notebook_of(kit_notebook, [live]),
    }
    said = [f"b_cells's notebook {len(students['b_cells']) / 2**20:.1f} MiB"]
    for student, notebook in students.items():
        folder = root / "submitted" / student / ASSIGNMENT
        shutil.copytree(release, folder)
        lay(folder / "exercises", reference())
        (folder / f"{ASSIGNMENT}.ipynb").write_bytes(notebook)
    for student in students:
        grade = Run(
            kit, root, ["nbgrader", "autograde", ASSIGNMENT, "--student", student], cap, env
        )
        said.append(f"{student}: autograde {grade.said()}")
    Run(kit, root, ["nbgrader", "generate_feedback", ASSIGNMENT], cap, env)
    Run(kit, root, ["nbgrader", "export"], cap, env)
    scores = (
        {r["student_id"]: r["score"] for r in rows(root / "grades.csv")}
        if (root / "grades.csv").exists()
        else {}
    )
    page = root / "feedback" / "d_live" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    text = page.read_text(encoding="utf-8") if page.exists() else ""
    cells = text[text.find('id="notebook-container"') :]
    links, images = cells.count("javascript:alert"), cells.count('src="https://elsewhere')
    said.append(
        f"export {scores}; d_live's feedback: javascript: links {links}, remote images {images}"
    )
    return "; ".join(said)


ATTACKS = {
    "link": attack_link,
    "zips": attack_zips,
    "jose": attack_jose,
    "big_module": attack_big_module,
    "forged_mistake": attack_forged_mistake,
    "terminal": attack_terminal,
    "spreadsheet": attack_spreadsheet,
    "zip_collect": attack_zip_collect,
    "autograde": attack_autograde,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kit", nargs="?", type=Path, default=HERE)
    parser.add_argument(
        "--cap", type=int, default=2048, help="MiB a command's tree may hold before it is killed"
    )
    parser.add_argument("--only", nargs="*", choices=sorted(ATTACKS), default=sorted(ATTACKS))
    options = parser.parse_args()
    print(f"kit {options.kit}; load average before {os.getloadavg()}")
    for name in options.only:
        scratch = Path(tempfile.mkdtemp(prefix=f"doors-{name}-"))
        try:
            print(
                f"{name}: {ATTACKS[name](options.kit.resolve(), scratch, options.cap << 20)}",
                flush=True,
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
