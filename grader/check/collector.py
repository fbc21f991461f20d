"""The checks run in the grader's process, and each check's verdict as the grader's process saw it.

Imported when a run has a check to run (grader.check.runner): Hypothesis loads here, pytest never.
The check files are pytest files, which pytest runs as they are (checks/conftest.py gives them the
`submission` fixture and the seed); a run calls their checks itself, in file order, with the same,
since pytest's own start and collection took longer than some exercises' checks.
"""

import contextlib
import importlib
import io
import sys
import time
import warnings
from pathlib import Path

from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir
from threadpoolctl import threadpool_limits

from grader import outlet
from grader.check.checks import judged, profiles  # noqa: F401  (registers the profiles)
from grader.check.checks.harness import CheckFailed, Halt, Submission, labelled
from grader.check.checks.seeding import seeded
from grader.check.checks.workers import StudentCodePool
from grader.check.results import (
    CheckResult,
    ExerciseResult,
    exercise_status,
    function_points,
    partial_points,
)
from grader.exercises import BY_NAME
from grader.sandbox.errors import StudentError
from grader.sandbox.process import GRADER_FAULT

# the student's code gave a wrong answer by raising
FAILED_KINDS = {"raised", "bad_output", "memory"}


class Collector:
    """Each check's verdict, as the grader's process saw it."""

    def __init__(self):
        self.expected: dict[str, list[str]] = {}  # exercise -> check ids, in file order
        self.results: dict[str, CheckResult] = {}
        self.seconds: dict[str, float] = {}  # check id -> time it took
        self.broken: list[str] = []  # exercises whose check files could not be loaded
        self.public: set[str] = set()  # the ids of the public checks

    def run(self, check, submission: Submission, exercise: str, public: bool) -> None:
        """Run one check on the exercise's submission and keep its verdict; Ctrl-C stops the run."""
        check_id = f"{exercise}.{check.__name__.removeprefix('test_')}"
        self.expected.setdefault(exercise, []).append(check_id)
        if public:
            self.public.add(check_id)
        started, error = time.perf_counter(), None
        try:
            submission.new_check()
            judged.run(check, submission)  # a failure that is an earlier function's is blamed on it
        except KeyboardInterrupt:
            raise
        except BaseException as raised:  # noqa: BLE001  (a check's end, whatever it is, is its verdict)
            error = raised
        self.seconds[check_id] = time.perf_counter() - started
        printed, calls = (
            outlet.terminal(submission.printed.everything(), "\n\t"),
            submission.calls(),
        )
        role = getattr(judged.declared(check), "role", "work")
        if (
            error is None
        ):  # a passing check's message is a note alone: float32 input made float64 (where.widened)
            functions = judged.counted(check, None, "passed", submission)
            self.results[check_id] = CheckResult(
                check_id,
                "passed",
                submission.widened,
                printed=printed,
                calls=calls,
                functions=functions,
                role=role,
            )
            return
        status, message, by_grader = verdict(error)
        functions = judged.counted(check, error, status, submission)
        message = outlet.terminal(message + submission.printed.told(exercise), "\n\t")
        example = submission.last_example(error) if status == "failed" else None
        # what the check said, for `grader try`
        example = example and {**example, "said": message.splitlines()[0]}
        # as the check named it
        mistake = next(
            (leaf.mistake for leaf in _leaves(error) if isinstance(leaf, CheckFailed)), ""
        )
        self.results[check_id] = CheckResult(
            check_id,
            status,
            message,
            by_grader,
            printed=printed,
            example=example,
            calls=calls,
            blamed_function=last_called(submission),
            failed_import=failed_import(error),
            functions=functions,
            role=role,
            mistake=mistake,
        )


def _leaves(error):
    """The exceptions inside an exception group (or the error itself)."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def last_called(submission: Submission) -> str:
    """The student's function the check called last, if it called any (the reference's calls are not the student's)."""
    last = submission.last
    return last[0] if last is not None and last[0] in submission.called else ""


def failed_import(error) -> str:
    """The student's module an import error the check ended on is in, as the worker named it; "" for any other end."""
    for leaf in _leaves(error):
        found = leaf.error if isinstance(leaf, Halt) else leaf
        if isinstance(found, StudentError) and found.kind == "import":
            return found.module
    return ""


def verdict(error) -> tuple[str, str, bool]:
    """A check's status and message from the exception that ended it, and whether it is the grader's fault."""
    leaves = list(_leaves(error)) if error is not None else []
    for leaf in leaves:
        if isinstance(leaf, CheckFailed):
            return "failed", str(leaf), False
        if isinstance(leaf, Halt):
            status = {"not_started": "not_started", "memory": "failed"}.get(
                leaf.error.kind, "error"
            )
            inputs = "".join(
                "\n" + labelled(f"{name} = ", value) for name, value in leaf.inputs.items()
            )
            return (
                status,
                leaf.error.message + (f"\nIt happened on this input:{inputs}" if inputs else ""),
                leaf.error.kind == "grader",
            )
        if isinstance(leaf, StudentError):
            status = (
                "not_started"
                if leaf.kind == "not_started"
                else "failed"
                if leaf.kind in FAILED_KINDS
                else "error"
            )
            return status, leaf.message, leaf.kind == "grader"
    name = type(leaves[0]).__name__ if leaves else "no result"
    return "error", f"The grader could not finish this check ({name}). {GRADER_FAULT}", True


def collect(
    names,
    folder: Path,
    profile: str,
    seed: int,
    timeout: float,
    budget: float,
    kinds=("public", "hidden"),
    workers=None,
) -> Collector:
    """Run the checks of these exercises, public ones first, each file's in its order; the collector holds every verdict.

    workers: the run's StudentCodePool, started early (else the run starts its own, and stops them).
    """
    collector, previous, own = Collector(), settings.get_current_profile_name(), workers is None
    workers = StudentCodePool(folder, timeout=timeout, budget=budget) if own else workers
    # before the checks are imported, so that their settings follow it
    settings.load_profile(profile)
    try:
        with (
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
            warnings.catch_warnings(),
        ):
            # the grader's own numpy on odd inputs: nothing a student should see
            warnings.simplefilter("ignore")
            for name in names:
                for kind in kinds:
                    if (module := _imported(kind, name)) is None:
                        collector.broken.append(name)
                        continue
                    submission = Submission(workers, module.EXERCISE)
                    for check in _checks(module):
                        collector.run(
                            seeded(check, seed), submission, module.EXERCISE, kind == "public"
                        )
    finally:
        settings.load_profile(previous)
        if own:
            workers.close()
    return collector


def _imported(kind: str, name: str):
    """The check file of this kind for this exercise, imported afresh under the run's profile; None when it cannot be."""
    module = f"grader.check.checks.{kind}.test_{name}"
    sys.modules.pop(module, None)
    try:
        return importlib.import_module(module)
    except Exception:  # noqa: BLE001  (its exercise is an error of the grader's)
        return None


def _checks(module) -> list:
    """A check file's checks, as pytest finds them: its functions named test_*, in the file's order."""
    return [
        value for key, value in vars(module).items() if key.startswith("test_") and callable(value)
    ]


def exercise_result(name: str, collector: Collector) -> ExerciseResult:
    """One exercise's verdict from its checks; a check that did not report is an error."""
    max_points = BY_NAME[name].points
    if name in collector.broken or name not in collector.expected:
        problem = CheckResult(f"{name}.checks_loaded", "error", verdict(None)[1], True)
        return ExerciseResult(name, "error", 0.0, max_points, [problem])
    checks = [
        collector.results.get(
            check, CheckResult(check, "error", "This check did not report a result.")
        )
        for check in collector.expected[name]
    ]
    for check in checks:
        check.seconds = collector.seconds.get(check.id, 0.0)
        check.public = check.id in collector.public
    exercise = BY_NAME[name]
    return ExerciseResult(
        name,
        exercise_status(checks),
        partial_points(exercise, checks),
        max_points,
        checks,
        functions=function_points(exercise, checks),
    )


def checked(
    folder: Path, root: Path, names, stubs, *, profile, seed, timeout, budget, kinds
) -> dict[str, ExerciseResult]:
    """Each of these exercises' verdict, its checks run here on the snapshot in folder (root: the run's private folder).

    The reference runs here on one BLAS thread: OpenBLAS's own threads, racing the threads that
    start workers, left a matrix product waiting for ever (2 runs of 12 on a busy machine), and
    the arrays here are too small for threads to help.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        # never a .hypothesis/ folder where the grader runs
        set_hypothesis_home_dir(root / ".hypothesis")
        workers = StudentCodePool(
            folder, timeout=timeout, budget=budget, unwritten=frozenset(stubs)
        )
        try:
            workers.start_early(names)
            collector = collect(names, folder, profile, seed, timeout, budget, kinds, workers)
        finally:
            workers.close()
    return {name: exercise_result(name, collector) for name in names}
