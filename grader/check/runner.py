"""Running the checks (public, and hidden in the full kit) on a submission, and the verdicts' notes on earlier exercises.

The checks run in the grader's process (grader.check.collector, imported only when a
check must run): the public checks of a module that is the stub as given end as recorded
(grader.check.untouched), so a new student's first `grader` loads neither Hypothesis nor a worker.
"""

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from grader import kit
from grader.check.checks.harness import BUDGET, SEED
from grader.check.files import hashes_for
from grader.check.results import ExerciseResult, Report
from grader.check.untouched import recorded, untouched_stubs
from grader.exercises import BY_NAME, NAMES
from grader.paths import SOLUTIONS_DIR
from grader.sandbox import isolation
from grader.sandbox.private import Snapshot
from grader.style import in_sentence

# which folders of checks/ each kind of run uses
KINDS = {"public": ("public",), "all": ("public", "hidden")}


def run_checks(submission: Path, exercises: Sequence[str] | None = None, **options) -> Report:
    """Run the checks of these exercises (all by default) on a submission folder; never prints.

    The five files are read once and copied (a Snapshot), and only that copy is graded: what the
    student's code does to its folder during the run changes nothing. Raises NotRegular when a
    module is not a regular file. options: those of check_snapshot.
    """
    with Snapshot(Path(submission)) as snapshot:
        return check_snapshot(snapshot, exercises, **options)


def check_snapshot(
    snapshot: Snapshot,
    exercises: Sequence[str] | None = None,
    *,
    saved: Mapping[str, ExerciseResult] | None = None,
    rerun: bool = True,
    profile: str = "default",
    seed: int = SEED,
    timeout: float = 10.0,
    budget: float = BUDGET,
    checks: str | None = None,
    record: bool = True,
) -> Report:
    """The verdicts of these exercises (all by default) on a snapshot's files, each noting the earlier exercise to fix first.

    saved: verdicts of these very files from earlier runs (grader.check.state), by exercise: they
    name the root causes too, and with rerun False they stand for their exercise instead of its checks.
    checks: "public" or "all" (public and hidden); by default all in the full kit, and the public
    ones in the student's kit, which has no other. profile: a Hypothesis profile of
    grader/check/checks/conftest.py; timeout: seconds per call of student code; budget: for the run.
    record: whether the public checks of an untouched stub end as recorded (False runs them, to write the record).
    """
    names, saved = (
        [name for name in NAMES if exercises is None or name in exercises],
        dict(saved or {}),
    )
    checks = checks or kit.checks_run()
    if checks not in KINDS or checks == "all" and kit.is_student_kit():
        raise ValueError(f"checks is 'public' or, in the full kit, 'all'; not {checks!r}")
    todo = names if rerun else [name for name in names if name not in saved]
    stubs = untouched_stubs(snapshot.files)
    as_recorded = {
        name: found
        for name in stubs & set(todo)
        if record and checks == "public" and (found := recorded(name))
    }
    options = {
        "profile": profile,
        "seed": seed,
        "timeout": timeout,
        "budget": budget,
        "kinds": KINDS[checks],
    }
    ran = as_recorded | _checked(
        snapshot.folder,
        snapshot.root,
        [name for name in todo if name not in as_recorded],
        stubs,
        options,
    )
    reference = reference_hashes()
    for name, result in ran.items():
        result.files = hashes_for(snapshot.files, name)
        own = f"{name}.py"
        result.same_as_reference = snapshot.source != SOLUTIONS_DIR.resolve() and result.files.get(
            own
        ) == reference.get(own)
    known = saved | ran
    note_root_causes(list(known.values()))
    # the workers of this run were confined the same way (chosen once per process)
    tier = isolation.choose().name if ran else "none"
    return Report([known[name] for name in names], seed=seed, isolation=tier, checks=checks)


def _checked(
    folder: Path, root: Path, names: list[str], stubs, options: dict
) -> dict[str, ExerciseResult]:
    """These exercises' verdicts, their checks run here (grader.check.collector, which loads Hypothesis)."""
    if not names:
        return {}
    from grader.check.collector import checked

    return checked(folder, root, names, stubs, **options)


def reference_hashes() -> dict[str, str]:
    """The sha256 of each reference module, where this kit has the reference."""
    found = {}
    for name in NAMES:
        path = SOLUTIONS_DIR / f"{name}.py"
        if path.is_file():
            found[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def note_root_causes(results: list[ExerciseResult]) -> None:
    """Note, on each exercise that builds on earlier ones, which of those fail or stop it from being imported.

    results: every verdict known of the same files. In the full kit the earlier exercises are graded
    with the reference in place; in the student's kit with the student's own, so there a failure may
    come from an earlier exercise, and the note says so.
    """
    status = {result.name: result.status for result in results}
    for result in results:
        result.note, result.cause = "", ""
        if broken := unimportable(result):
            result.cause = broken[0]
            result.note = (
                f"{result.name}.py imports your {in_sentence([f'{name}.py' for name in broken])}, which cannot be imported: "
                f"fix {broken[0]} first, then check {result.name} again."
            )
            continue
        failing = [
            used for used in BY_NAME[result.name].uses if status.get(used, "passed") != "passed"
        ]
        if not failing and (blamed := called_wrong(result)):
            used, function = blamed
            result.cause = used
            result.note = (
                f"{result.name}'s checks call your own {function} (in {used}.py), and the message says it went wrong there: "
                f"fix {used} first, then check {result.name} again."
            )
        if not failing:
            continue
        result.cause = failing[0]
        verb = "fails its" if len(failing) == 1 else "fail their"
        if kit.is_student_kit():
            own = (
                "and passes" if result.status == "passed" else "so its failures may come from them"
            )
            result.note = (
                f"{result.name} uses {in_sentence([f'your {used}' for used in failing])}, which {verb} public checks; "
                f"here {result.name} runs with your own {in_sentence(list(BY_NAME[result.name].uses))}, {own}: fix {failing[0]} first."
            )
            continue
        own = "passes" if result.status == "passed" else "is checked"
        result.note = (
            f"{result.name} uses {in_sentence([f'your {used}' for used in failing])}, which {verb} checks; "
            f"{result.name} itself {own} with the reference {in_sentence(failing)} in place, so fix {failing[0]} first."
        )


def unimportable(result: ExerciseResult) -> list[str]:
    """The other exercises whose module, named by this one's import errors as where they happened, stops it from being imported."""
    named = {check.failed_import for check in result.checks if check.status == "error"}
    return [name for name in NAMES if name in named and name != result.name]


def called_wrong(result: ExerciseResult) -> tuple[str, str] | None:
    """(exercise, function) of an earlier exercise's function that a failing check of this one called last, if any.

    Only the student's kit calls them (the full kit serves the reference): the check was judging
    that function's own call or result when it failed.
    """
    for check in (check for check in result.checks if check.status in ("failed", "error")):
        for used in BY_NAME[result.name].uses:
            if check.blamed_function in BY_NAME[used].functions:
                return used, check.blamed_function
    return None
