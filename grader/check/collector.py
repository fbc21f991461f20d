"""The checks run by pytest in the grader's process, and each check's verdict as the grader's process saw it.

Imported when a run has a check to run (grader.check.runner): pytest and Hypothesis load here.
"""

import contextlib
import io
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir
from threadpoolctl import threadpool_limits

from grader.check.checks.harness import CheckFailed, Halt, labelled
from grader.check.checks.workers import Workers
from grader.check.results import CheckResult, ExerciseResult, exercise_status, partial_points
from grader.exercises import BY_NAME
from grader.paths import CHECKS_DIR
from grader.sandbox.errors import StudentError
from grader.sandbox.process import GRADER_FAULT
from grader.style import visible

NO_AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
FAILED_KINDS = {"raised", "bad_output", "memory"}  # the student's code gave a wrong answer by raising


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


def checked(folder: Path, root: Path, names, stubs, *, profile, seed, timeout, budget, kinds, spares=()) -> dict[str, ExerciseResult]:
    """Each of these exercises' verdict, its checks run by pytest on the snapshot in folder (root: the run's private folder).

    spares: workers started ahead of the files, used first and stopped at the end.

    The reference runs here on one BLAS thread: OpenBLAS's own threads, racing the threads that
    start workers, left a matrix product waiting for ever (2 runs of 12 on a busy machine), and
    the arrays here are too small for threads to help.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        set_hypothesis_home_dir(root / ".hypothesis")  # never a .hypothesis/ folder where the grader runs
        workers = Workers(folder, timeout=timeout, budget=budget, unwritten=frozenset(stubs), spares=spares)
        try:
            workers.start_early(names)
            collector = collect(names, folder, profile, seed, timeout, budget, kinds, workers)
        finally:
            workers.close()
    return {name: exercise_result(name, collector) for name in names}
