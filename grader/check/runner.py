"""Running the checks (public, and hidden in the full kit) with pytest in the grader's process, and collecting their verdicts."""

import contextlib
import hashlib
import io
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir
from threadpoolctl import threadpool_limits

from grader import kit
from grader.check.checks.harness import BUDGET, SEED, CheckFailed, Halt, labelled
from grader.check.checks.workers import Workers
from grader.check.files import depends_on
from grader.check.results import CheckResult, ExerciseResult, Report, exercise_status, partial_points
from grader.check.unwritten import unwritten
from grader.exercises import BY_NAME, NAMES
from grader.paths import SOLUTIONS_DIR
from grader.sandbox import isolation
from grader.sandbox.errors import StudentError
from grader.sandbox.private import Snapshot
from grader.sandbox.process import GRADER_FAULT
from grader.style import in_sentence, visible

CHECKS_DIR = Path(__file__).resolve().parent / "checks"
KINDS = {"public": ("public",), "all": ("public", "hidden")}  # which folders of checks/ each kind of run uses
NO_AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
FAILED_KINDS = {"raised", "bad_output", "memory"}  # the student's code gave a wrong answer by raising
IMPORT_ERROR = re.compile(r"your \w+\.py cannot be imported: .*\((\w+)\.py, line \d+")  # the sandbox's words, and where


class Collector:
    """A pytest plugin that keeps each check's verdict, as the grader's process saw it."""

    def __init__(self):
        self.expected: dict[str, list[str]] = {}  # exercise -> check ids, in file order
        self.results: dict[str, CheckResult] = {}
        self.seconds: dict[str, float] = {}  # check id -> time spent in its setup, call and teardown
        self.broken: list[str] = []  # files that could not be collected
        self.public: set[str] = set()  # the ids of the public checks

    def pytest_collectreport(self, report):
        """Remember a check file that failed to load."""
        if report.failed:
            self.broken.append(Path(report.nodeid.split("::")[0]).stem.removeprefix("test_"))

    def pytest_collection_modifyitems(self, items):
        """Remember which checks should report; a failure's report is the exception alone (verdict() words it)."""
        for item in items:
            item.repr_failure = _exception_only  # pytest's own, a traceback with source, took 0.17 s per failing check
            self.expected.setdefault(_exercise(item), []).append(_check_id(item))
            if _public(item):
                self.public.add(_check_id(item))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        """Turn the outcome of a check's setup or call into its verdict."""
        report = (yield).get_result()
        check = _check_id(item)
        self.seconds[check] = self.seconds.get(check, 0.0) + report.duration
        submission = getattr(item, "funcargs", {}).get("submission") if call.when == "call" else None
        everything = visible(submission.printed.everything()) if submission else ""
        calls = submission.calls() if submission else ()
        if call.when == "call" and report.passed:
            self.results[check] = CheckResult(check, "passed", printed=everything, calls=calls)
        elif report.failed or report.skipped:
            status, message, by_grader = verdict(call.excinfo.value if call.excinfo else None)
            message = visible(message + (submission.printed.told(_exercise(item)) if submission else ""))
            example = submission.last_example(call.excinfo.value if call.excinfo else None) if submission and status == "failed" else None
            example = example and {**example, "said": message.splitlines()[0]}  # what the check said, for `grader try`
            self.results.setdefault(check, CheckResult(check, status, message, by_grader, printed=everything, example=example, calls=calls))


def _exception_only(excinfo, style=None) -> str:
    """A failure as pytest keeps it in its report, which nothing here reads: the exception's type."""
    return excinfo.typename


def _exercise(item) -> str:
    """The exercise a check belongs to."""
    return item.module.EXERCISE


def _public(item) -> bool:
    """Whether a check is a public one: its file is in checks/public/."""
    return Path(str(item.fspath)).parent.name == "public"


def _check_id(item) -> str:
    """A check's id: exercise.property, e.g. softmax.rows_sum_to_one."""
    return f"{_exercise(item)}.{item.name.removeprefix('test_')}"


def _leaves(error):
    """The exceptions inside an exception group (or the error itself)."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def verdict(error) -> tuple[str, str, bool]:
    """A check's status and message from the exception that ended it, and whether it is the grader's fault."""
    leaves = list(_leaves(error)) if error is not None else []
    for leaf in leaves:
        if isinstance(leaf, CheckFailed):
            return "failed", str(leaf), False
        if isinstance(leaf, Halt):
            status = {"not_started": "not_started", "memory": "failed"}.get(leaf.error.kind, "error")
            inputs = "".join("\n" + labelled(f"{name} = ", value) for name, value in leaf.inputs.items())
            return status, leaf.error.message + (f"\nIt happened on this input:{inputs}" if inputs else ""), leaf.error.kind == "grader"
        if isinstance(leaf, StudentError):
            status = "not_started" if leaf.kind == "not_started" else "failed" if leaf.kind in FAILED_KINDS else "error"
            return status, leaf.message, leaf.kind == "grader"
    name = type(leaves[0]).__name__ if leaves else "no result"
    return "error", f"The grader could not finish this check ({name}). {GRADER_FAULT}", True


def run_checks(
    submission: Path,
    exercises: Sequence[str] | None = None,
    *,
    profile: str = "default",
    seed: int = SEED,
    timeout: float = 10.0,
    budget: float = BUDGET,
    checks: str | None = None,
    spares=(),
) -> Report:
    """Run the checks of these exercises (all by default) on a submission folder; never prints.

    checks: "public" or "all" (public and hidden); by default all in the full kit, and the public
    ones in the student's kit, which has no other.

    The five files are copied first, and only that copy is graded: what the student's code does to
    its folder during the run changes nothing. profile: a Hypothesis profile of
    grader/check/checks/conftest.py; timeout: seconds per call of student code; budget: for the run.
    Raises NotRegular when a module is not a regular file. spares: workers started ahead of the files
    (grader.sandbox.process.Worker with no folder), used before any other and stopped at the end.

    The reference runs here on one BLAS thread: OpenBLAS's own threads, racing the threads that
    start workers, left a matrix product waiting for ever (2 runs of 12 on a busy machine), and
    the arrays here are too small for threads to help.
    """
    names, submission = [name for name in NAMES if exercises is None or name in exercises], Path(submission)
    checks = checks or kit.checks_run()
    if checks not in KINDS or checks == "all" and kit.is_student_kit():
        raise ValueError(f"checks is 'public' or, in the full kit, 'all'; not {checks!r}")
    with Snapshot(submission) as snapshot, threadpool_limits(limits=1, user_api="blas"):  # one BLAS thread, see below
        set_hypothesis_home_dir(snapshot.root / ".hypothesis")  # never a .hypothesis/ folder where the grader runs
        workers = Workers(snapshot.folder, timeout=timeout, budget=budget, unwritten=frozenset(unwritten(snapshot.files)), spares=spares)
        try:
            workers.start_early(names)
            collector = collect(names, snapshot.folder, profile, seed, timeout, budget, KINDS[checks], workers)
        finally:
            workers.close()
        files = {name: {f"{m}.py": snapshot.hashes[f"{m}.py"] for m in depends_on(snapshot.files, name)} for name in names}
    tier = isolation.choose().name  # the workers of this run were confined the same way (chosen once per process)
    results = [exercise_result(name, collector) for name in names]
    reference = reference_hashes()
    for result in results:
        result.files = files[result.name]
        own = f"{result.name}.py"
        result.same_as_reference = submission.resolve() != SOLUTIONS_DIR.resolve() and result.files.get(own) == reference.get(own)
    add_root_causes(results)
    return Report(results, seed=seed, isolation=tier, checks=checks)


def reference_hashes() -> dict[str, str]:
    """The sha256 of each reference module, where this kit has the reference."""
    found = {}
    for name in NAMES:
        path = SOLUTIONS_DIR / f"{name}.py"
        if path.is_file():
            found[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def collect(
    names, folder: Path, profile: str, seed: int, timeout: float, budget: float, kinds=("public", "hidden"), workers=None
) -> "Collector":
    """Run pytest on the check files of these exercises, public ones first; the collector holds every verdict.

    workers: the run's Workers, started early (the checks start their own without them).
    """
    collector = Collector()
    args = [str(CHECKS_DIR / kind / f"test_{name}.py") for name in names for kind in kinds]
    # one word per option: pytest's early parse would take a lone folder for a test path and load its conftest.py
    args += [f"--submission={folder}", f"--check-seed={seed}", f"--call-timeout={timeout}", f"--budget={budget}"]
    args += [f"--check-profile={profile}", f"--confcutdir={CHECKS_DIR}"]
    args += ["-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:threadexception"]
    args += ["--capture=no", "-q", "-o", "addopts="]
    args += ["--rootdir", str(CHECKS_DIR), "-c", os.devnull]
    for module in [m for m in sys.modules if m.startswith(("grader.check.checks.public.test_", "grader.check.checks.hidden.test_"))]:
        del sys.modules[module]  # import the checks afresh, under this run's profile
    previous, autoload = settings.get_current_profile_name(), os.environ.get(NO_AUTOLOAD)
    os.environ[NO_AUTOLOAD] = "1"  # only pytest's own plugins: faster, and no installed plugin changes a verdict
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = pytest.main(args, plugins=[collector] + ([workers] if workers is not None else []))
    finally:
        settings.load_profile(previous)
        if autoload is None:
            del os.environ[NO_AUTOLOAD]
        else:
            os.environ[NO_AUTOLOAD] = autoload
    if code == pytest.ExitCode.INTERRUPTED:
        raise KeyboardInterrupt  # Ctrl-C: a run cut short gives no verdict at all
    return collector


def exercise_result(name: str, collector: Collector) -> ExerciseResult:
    """One exercise's verdict from its checks; a check that did not report is an error."""
    max_points = BY_NAME[name].points
    if name in collector.broken or name not in collector.expected:
        problem = CheckResult(f"{name}.checks_loaded", "error", verdict(None)[1], True)
        return ExerciseResult(name, "error", 0.0, max_points, [problem])
    checks = [
        collector.results.get(check, CheckResult(check, "error", "This check did not report a result."))
        for check in collector.expected[name]
    ]
    for check in checks:
        check.seconds = collector.seconds.get(check.id, 0.0)
        check.public = check.id in collector.public
    return ExerciseResult(name, exercise_status(checks), partial_points(max_points, checks), max_points, checks)


def add_root_causes(results: list[ExerciseResult]) -> None:
    """Note, on an exercise that builds on earlier ones, which of those fail in this run or stop it from being imported.

    In the full kit those are graded with the reference in place; in the student's kit with the
    student's own, so there a failure may come from an earlier exercise, and the note says so.
    """
    status = {result.name: result.status for result in results}
    for result in results:
        if broken := unimportable(result):
            result.cause = broken[0]
            result.note = (
                f"{result.name}.py imports your {in_sentence([f'{name}.py' for name in broken])}, which cannot be imported: "
                f"fix {broken[0]} first, then check {result.name} again."
            )
            continue
        failing = [used for used in BY_NAME[result.name].uses if status.get(used, "passed") != "passed"]
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
            own = "and passes" if result.status == "passed" else "so its failures may come from them"
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
    """The other exercises whose module, named as the place of this one's import errors, stops this one from being imported."""
    named = {found.group(1) for check in result.checks if check.status == "error" and (found := IMPORT_ERROR.match(check.message))}
    return [name for name in NAMES if name in named and name != result.name]


def called_wrong(result: ExerciseResult) -> tuple[str, str] | None:
    """(exercise, function) of an earlier exercise's function that a check of this one called directly and found wrong, if any.

    Only the student's kit calls them (the full kit serves the reference); a message that starts
    with the function's name ("apply_causal_mask, called with ... should have shape", "... raised")
    is about that function's own result.
    """
    for check in (check for check in result.checks if check.status in ("failed", "error")):
        for used in BY_NAME[result.name].uses:
            for function in BY_NAME[used].functions:
                if check.message.startswith((f"{function}, ", f"{function} raised ", f"{function}(")):
                    return used, function
    return None
