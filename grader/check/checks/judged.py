"""Which function each check judges, declared above it, and which function a failure is counted against.

Every check says what it judges: `@judges("sgd_step", defining=True)` above it (outermost, over
`@at_scale` and `@given`). Its exercise's points follow (grader.check.results.function_points): a
function earns its share by the share of its own checks that pass. A check of how a function treats
its inputs rather than what it computes is a guard (`guard=True`): a function that passes its
guards alone (a `pass`) earns nothing. A defining check (`defining=True`) is the property without
which the function does not do its job (sgd_step moving downhill, train taking its steps): a function
that fails it earns nothing either.

A check fails against the function it judges; one that judges several, against the one it called
last; one that stopped in a call, against the function called. In the full kit a function that
may call an earlier one of its exercise (grader.exercises.BUILDS_ON) is checked again, once, with
the reference of that earlier one standing in for the student's own when a check of it fails: if it
passes then, the failure is the earlier function's, and the message says so. So is a check of an
exercise whose student module imports an earlier exercise it is not graded with (a training.py whose
backward pass calls the student's attention_head): checked again with that exercise's reference
standing in, it passes its function and counts against none of this exercise's. The student's kit has
no reference; there the message says when the earlier function fails a check of its own.
"""

from dataclasses import dataclass

from grader.check.checks.harness import CheckFailed, Halt, Submission
from grader.check.checks.printed import Printed
from grader.exercises import BUILDS_ON, BY_NAME, NAMES
from grader.sandbox.errors import StudentError
from grader.sandbox.guard import imports_of

ROLES = ("work", "defining", "guard")


@dataclass(frozen=True)
class Judged:
    """A check's declaration: the functions it judges and its role (see the module's docstring)."""

    functions: tuple[str, ...]
    role: str = "work"


def judges(*functions: str, defining: bool = False, guard: bool = False):
    """Declare the functions of its exercise a check judges; the decorator above all others."""

    def declare(check):
        check.judged = Judged(functions, "defining" if defining else "guard" if guard else "work")
        return check

    return declare


def declared(check) -> Judged | None:
    """A check's declaration, None when it has none (tests/check/test_points.py holds that every check has one)."""
    return getattr(check, "judged", None)


def run(check, submission: Submission) -> None:
    """Run a check; a failure that goes away with the reference of an earlier function in the student's place is that one's.

    Raises what the check raised, or the same failure blamed on the earlier function, its message saying so.
    """
    try:
        check(submission)
    except (CheckFailed, Halt, BaseExceptionGroup) as error:
        stopped = first_failure(error)
        if stopped is None or isinstance(stopped, Halt) and stopped.error.kind != "not_started":
            raise  # a hang or a crash is not run again
        function = blamed(check, submission, stopped) or ""
        submission.failing.add(function)
        earlier = BUILDS_ON.get(function)
        if (
            earlier is None
            or earlier not in submission.own_earlier
            or not submission.with_reference
        ):
            if (
                earlier in submission.failing and earlier in submission.own_earlier
            ):  # the student's kit: no reference to try
                said = f"  {function} may call your {earlier}, which fails a check of its own: if it does, fix {earlier} first."
                raise noted(stopped, said) from None
            if function and (other := other_exercise(check, submission)):
                said = (
                    f"{stopped}\n  The failure comes from your {other}.py, which your {submission.exercise}.py "
                    f"imports. With the reference {other} standing in for yours, {function} passes this check."
                )
                raise noted(stopped, said, other, cleared=function) from None
            raise
        # the stub is the checked function itself
        unwritten = isinstance(stopped, Halt) and earlier not in submission.failing
        standing_in = frozenset({f"{submission.exercise}.{earlier}"})
        if unwritten or not passes_with_reference(check, submission, standing_in):
            raise
        submission.failing.discard(function)
        submission.failing.add(earlier)
        if isinstance(stopped, Halt):
            said = f"{function} stops in your {earlier}, which is not written yet: it still raises NotImplementedError."
        else:
            said = f"{stopped}\n  The failure comes from your {earlier}, which {function} calls."
        said += (
            f"\n  With the reference {earlier} standing in for yours, {function} passes this check."
        )
        raise noted(stopped, said, earlier, cleared=function) from None


def other_exercise(check, submission: Submission) -> str | None:
    """An earlier exercise the student's module imports though this one is not graded with its reference (heads, in a
    training.py whose backward pass calls attention_head), with whose reference standing in the check passes; else None.

    The full kit only: its functions serve every call of them in one more run of the check.
    """
    if not submission.with_reference:
        return None
    earlier = NAMES[: NAMES.index(submission.exercise)]
    imported = imports_of(submission.workers.folder, submission.exercise)
    for other in (
        name
        for name in earlier
        if name in imported and name not in BY_NAME[submission.exercise].uses
    ):
        functions = frozenset(f"{other}.{function}" for function in BY_NAME[other].functions)
        if passes_with_reference(check, submission, functions):
            return other
    return None


def passes_with_reference(check, submission: Submission, standing_in: frozenset[str]) -> bool:
    """Whether the check passes with the reference of these functions ("module.function") serving every call of them
    (the full kit only).

    What the first run left for the verdict (the last call, what was printed) is kept.
    """
    kept = submission.printed, submission.last, submission.called
    submission.printed, submission.standing_in = Printed(), standing_in
    try:
        check(submission)
    except (Exception, Halt):  # noqa: BLE001  (it fails with the reference as well: the failure is the function's own)
        return False
    finally:
        submission.printed, submission.last, submission.called = kept
        submission.standing_in = frozenset()
    return True


def first_failure(error) -> CheckFailed | Halt | None:
    """The failure a verdict is made of: the first CheckFailed or Halt in an exception group, as the collector reads it."""
    if isinstance(error, BaseExceptionGroup):
        return next(
            (leaf for inner in error.exceptions if (leaf := first_failure(inner)) is not None), None
        )
    return error if isinstance(error, (CheckFailed, Halt)) else None


def blamed(check, submission: Submission, stopped: CheckFailed | Halt) -> str | None:
    """The function of the exercise a failure counts against (see the module's docstring); None when the check says nothing."""
    if getattr(stopped, "blame", None) in submission.functions:
        return stopped.blame
    judged = declared(check)
    if judged is None:
        return (
            submission.last[0]
            if submission.last and submission.last[0] in submission.functions
            else None
        )
    if len(judged.functions) == 1:
        return judged.functions[0]
    last = submission.last[0] if submission.last else None
    return last if last in judged.functions else None


def noted(
    stopped: CheckFailed | Halt, said: str, blame: str | None = None, cleared: str | None = None
):
    """The same failure with a line added to its message (with blame: its message in full), blamed on another function if given."""
    if isinstance(stopped, Halt):
        message = said if blame else f"{stopped.error.message}\n{said}"
        again: CheckFailed | Halt = Halt(
            StudentError(stopped.error.kind, message, stopped.error.output),
            stopped.inputs,
            blame or stopped.blame,
        )
    else:
        again = CheckFailed(
            said if blame else f"{stopped}\n{said}",
            stopped.expected,
            stopped.inputs,
            blame or stopped.blame,
        )
    again.cleared = cleared  # type: ignore[union-attr]  # the function that passed with the reference standing in
    return again


def counted(check, error, status: str, submission: Submission) -> dict[str, str]:
    """The verdict a check gives each function it judged: all of them when it passed, else the one blamed.

    A failure that goes away with the reference's earlier function standing in passes the function the
    check judges and fails the earlier one (grader.check.results.function_points says how that counts).
    """
    judged = declared(check)
    functions = judged.functions if judged else submission.calls() or submission.functions
    if error is None:
        return dict.fromkeys(functions, "passed")
    stopped = first_failure(error)
    function = blamed(check, submission, stopped) if stopped is not None else None
    if function is None:  # the check cannot say which: against every function it judges
        return dict.fromkeys(functions, status)
    # it passes with the reference's earlier function standing in
    cleared = getattr(stopped, "cleared", None)
    if cleared and getattr(stopped, "blame", None) not in submission.functions:
        return {cleared: "passed"}  # another exercise's fault: none of this one's
    return ({cleared: "passed"} if cleared else {}) | {function: status}
