"""`grader gradescope`: the Gradescope autograder zip, and the grading its run_autograder starts in the container."""

import json
import os
import shutil
import sys
import tempfile
import time
import traceback
import zipfile
from pathlib import Path

import click

from grader.check.results import score_all_or_nothing
from grader.course import gradescope_results as gs
from grader.course import late
from grader.course.batch import SUBMISSION_SECONDS
from grader.course.graders import check_once
from grader.paths import KIT_ROOT
from grader.sandbox import intake

ROOT_VAR = (
    "ATTENTION_BY_HAND_AUTOGRADER_ROOT"  # tests point it at a folder laid out like /autograder
)
DEFAULT_ROOT = "/autograder"
HERE = Path(__file__).resolve().parent
SCRIPTS = {
    "setup.sh": HERE / "gradescope_setup.sh",
    "run_autograder": HERE / "gradescope_run_autograder",
}
# what pip install -e and grading need
KIT = ("pyproject.toml", "README.md", "grader", "exercises", "solutions", "data")
LEFT_OUT = {"__pycache__", ".grader", ".hypothesis", ".pytest_cache"}
STAMP = (1980, 1, 1, 0, 0, 0)  # the same kit gives the same zip, byte for byte
SETTINGS = "attention_by_hand_settings.json"  # at the zip's root: the course's choices, read by each grading
WHEN = {
    "hidden": "never",
    "after_due_date": "after the due date",
    "after_published": "once you publish the grades",
}


def export(
    out_zip: Path,
    force: bool = False,
    hidden: str = "after_published",
    all_or_nothing: bool = False,
    late_policy: str = "",
) -> int:
    """`grader gradescope OUT_ZIP`: write the autograder zip; 1 when it exists and --force is not given.

    hidden is when students see which hidden checks did not pass and why (Gradescope's visibility); all_or_nothing
    gives an exercise its points only when every check passes; late_policy ("10%/day,max 3 days") takes points off
    late work, by the times in Gradescope's submission_metadata.json.
    """
    out_zip = Path(out_zip)
    if hidden not in gs.HIDDEN_VISIBILITIES:
        click.echo(
            f"--hidden {hidden!r}: choose one of {', '.join(gs.HIDDEN_VISIBILITIES)}.", err=True
        )
        return 2
    if late_policy:
        try:
            late.parse(late_policy)
        except late.PolicyError as error:
            click.echo(f"--late-policy: {error}.", err=True)
            return 2
    if out_zip.is_dir():
        click.echo(
            f"{out_zip} is a folder: name the zip file to write, for example {out_zip / 'autograder.zip'}.",
            err=True,
        )
        return 2
    if not out_zip.parent.is_dir():
        click.echo(
            f"{out_zip.parent} does not exist: create it or write the zip elsewhere.", err=True
        )
        return 2
    if out_zip.exists() and not force:
        click.echo(f"{out_zip} already exists; to replace it, run again with --force.", err=True)
        return 1
    count = write_zip(
        out_zip,
        {"hidden": hidden, "all_or_nothing": all_or_nothing}
        | ({"late_policy": late_policy} if late_policy else {}),
    )
    click.echo(f"Wrote {out_zip}: setup.sh, run_autograder and the kit ({count} files).")
    click.echo(
        f"Students see which hidden checks did not pass, and why: {WHEN[hidden]}; their points always."
    )
    click.echo(
        "On Gradescope: a Programming Assignment, Configure Autograder, Zip file upload, then this zip."
    )
    return 0


def kit_files() -> list[Path]:
    """The kit's files that go into the zip, relative to the kit, in a fixed order."""
    files = []
    for name in KIT:
        top = KIT_ROOT / name
        paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        files += [
            p.relative_to(KIT_ROOT)
            for p in paths
            if not LEFT_OUT & set(p.relative_to(KIT_ROOT).parts)
        ]
    return [path for path in files if path.suffix != ".pyc"]


def write_zip(out_zip: Path, settings: dict | None = None) -> int:
    """The two scripts at the zip's root, executable, the course's settings and the kit beside them; how many files in all."""
    entries = [(name, path.read_bytes(), 0o755) for name, path in SCRIPTS.items()]
    entries.append((SETTINGS, json.dumps(settings or {}, sort_keys=True).encode(), 0o644))
    entries += [(path.as_posix(), (KIT_ROOT / path).read_bytes(), 0o644) for path in kit_files()]
    temporary = out_zip.with_name(f".{out_zip.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, STAMP)
            info.create_system = 3  # Unix, so unzip applies the mode below
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    os.replace(temporary, out_zip)
    return len(entries)


def autograde(root: Path | None = None, timeout: float = SUBMISSION_SECONDS) -> int:
    """Grade ROOT/submission into ROOT/results/results.json (ROOT: $ATTENTION_BY_HAND_AUTOGRADER_ROOT or /autograder)."""
    root = Path(root or os.environ.get(ROOT_VAR, DEFAULT_ROOT))
    start = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="grader-gradescope-") as scratch:
            results = grade(root, Path(scratch), timeout, start)
        results = late_results(results, root, settings(root).get("late_policy", ""))
    except Exception as error:  # a bug here must still leave results for the student
        traceback.print_exc(file=sys.stdout)
        results = gs.not_graded(
            f"The autograder failed ({type(error).__name__}). {gs.FAULT}",
            {},
            time.monotonic() - start,
        )
    write_results(root / "results" / "results.json", results)
    print(f"Wrote {root / 'results' / 'results.json'}: {results['score']:g} points.")
    return 0


def grade(root: Path, scratch: Path, timeout: float, start: float) -> dict:
    """The results for ROOT/submission: its five modules as the intake took them, copied to scratch, checked by
    `grader check` in its own process."""
    if not (root / "submission").is_dir():
        reason = f"Gradescope gave the autograder no submission folder. {gs.FAULT}"
        print(reason)
        return gs.not_graded(reason, {}, time.monotonic() - start)
    submission = intake.take(intake.gradescope(root))
    if submission.problem:
        print(submission.problem)
        return gs.not_graded(submission.problem, {}, time.monotonic() - start)
    folder = scratch / "submission"
    folder.mkdir()
    for name, data in submission.modules.items():
        (folder / name).write_bytes(data)
    extra = {"graded_folder": submission.where, "submitted_sha256": submission.hashes()}
    student = {"id": submission.upload.student_id, "name": submission.upload.student_name}
    extra |= {"student": student} if any(student.values()) else {}
    result = scratch / "check.json"
    chosen = settings(root)
    if chosen["all_or_nothing"]:
        score_all_or_nothing()  # for the `grader check` below, this container's one grading
    returncode, output, timed_out = check_once(folder, result, timeout)
    print(output)  # the grader's report: Gradescope shows this stdout to instructors only
    return outcome(
        returncode, output, timed_out, result, extra, timeout, time.monotonic() - start, chosen
    )


def settings(root: Path) -> dict:
    """The course's settings from the zip (ROOT/source/SETTINGS); Gradescope's visibility after_published for the hidden checks by default."""
    try:
        chosen = json.loads((root / "source" / SETTINGS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        chosen = {}
    chosen = chosen if isinstance(chosen, dict) else {}
    hidden = chosen.get("hidden")
    late_policy = chosen.get("late_policy")
    return {
        "hidden": hidden if hidden in gs.HIDDEN_VISIBILITIES else "after_published",
        "all_or_nothing": chosen.get("all_or_nothing") is True,
    } | ({"late_policy": late_policy} if isinstance(late_policy, str) and late_policy else {})


def late_results(results: dict, root: Path, policy: str) -> dict:
    """The results with the course's late policy applied, by the times in ROOT/submission_metadata.json (unchanged without)."""
    if not policy:
        return results
    submitted, due = late.gradescope_times(root)
    if submitted is None or due is None:
        return gs.with_note(
            results,
            results["score"],
            "Gradescope gave no submission time or due date: no late policy applied.",
        )
    seconds = late.late_by(submitted, due)
    if seconds <= 0:
        return results
    chosen = late.parse(policy)
    return gs.with_note(
        results,
        late.penalised_total(results["score"], chosen, seconds),
        late.said(chosen, seconds).capitalize() + ".",
    )


def outcome(
    returncode,
    output: str,
    timed_out: bool,
    result: Path,
    extra: dict,
    timeout: float,
    seconds: float,
    chosen: dict | None = None,
) -> dict:
    """The results of a finished `grader check`: graded, stopped by the time limit, refused, or the grader's fault."""
    if timed_out:
        reason = f"Grading took longer than {timeout:g} s and was stopped: check that each of your functions returns quickly."
        print(reason)
        return gs.not_graded(reason, extra, seconds)
    try:
        check = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        check = None
    if isinstance(check, dict) and "total" in check:
        return gs.graded(
            check,
            extra["graded_folder"],
            extra,
            seconds,
            (chosen or {}).get("hidden", "after_published"),
        )
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
    if returncode == 2 and last.startswith("Cannot check:"):
        return gs.not_graded(last, extra, seconds)
    print(f"grader check stopped without a result (exit status {returncode}).")
    return gs.not_graded(
        f"The autograder stopped without a result (exit status {returncode}). {gs.FAULT}",
        extra,
        seconds,
    )


def write_results(path: Path, results: dict) -> None:
    """Write results.json whole, in one step, over whatever is there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=".results.", delete=False
    ) as f:
        f.write(json.dumps(results, indent=1) + "\n")  # a new file of a name no one could guess
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    os.replace(f.name, path)


def main() -> int:
    """The entry point of run_autograder; the check's sandbox ends whatever the student's code started."""
    return autograde()


if __name__ == "__main__":
    sys.exit(main())
