"""The verdicts: one result per check, per exercise, and the report over the exercises run."""

import math
import os
from dataclasses import dataclass, field

from grader.exercises import BY_NAME, Exercise
from grader.sandbox.worker.codec import shown

STATUSES = ("passed", "failed", "not_started", "error")


@dataclass
class CheckResult:
    """The outcome of one check: id like "softmax.rows_sum_to_one", status, message, and whether it is public."""

    id: str
    status: str
    message: str = ""
    by_grader: bool = False  # an error that is the grader's fault, not the student's
    seconds: float = 0.0  # how long the check took; not in the JSON
    public: bool = False  # a public check (in both kits), not a hidden one (the full kit's only)
    printed: str = ""  # everything the student's functions printed during the check, call by call
    example: dict | None = (
        None  # the failing call's function and encoded arguments, for `grader try`; not in the JSON
    )
    calls: tuple[
        str, ...
    ] = ()  # the functions of its exercise the check called, in the exercise's order; not in the JSON
    blamed_function: str = ""  # failing: the student's function it called last, whose call or result it was judging; not in the JSON
    failed_import: str = ""  # an import that failed: the student's module whose file the error is in; not in the JSON
    # the verdict it gives each function it counts for (checks.judged)
    functions: dict[str, str] = field(default_factory=dict)
    role: str = (
        "work"  # "defining", "guard" or "work" (grader.check.checks.judged); not in the JSON
    )
    mistake: str = ""  # the known mistake a failed check named (grader/check/diagnosis.py), never parsed from the message

    def __post_init__(self):
        # student text: every file and screen can hold it
        self.message, self.printed = (shown(self.message), shown(self.printed))

    def to_json(self) -> dict:
        """This check as check.schema.json writes it; "fault": "grader" marks an error that is the grader's."""
        told = {
            "id": self.id,
            "status": self.status,
            "message": self.message,
            "public": self.public,
            "functions": dict(self.functions),
        }
        told |= {"mistake": self.mistake} if self.mistake else {}
        return (
            told
            | ({"fault": "grader"} if self.by_grader else {})
            | ({"printed": self.printed} if self.printed else {})
        )


@dataclass
class ExerciseResult:
    """One exercise's verdict, its points and the checks behind them."""

    name: str
    status: str
    points: float
    max_points: float
    checks: list[CheckResult] = field(default_factory=list)
    note: str = ""  # e.g. the root cause when an earlier exercise fails
    cause: str = ""  # that earlier exercise, to fix first
    # the sha256 of each file the verdict depends on
    files: dict[str, str] = field(default_factory=dict)
    same_as_reference: bool = False  # the exercise's own module is the reference's, byte for byte
    # each function's points, max_points, passed and checks
    functions: dict[str, dict] = field(default_factory=dict)

    def counts(self, public: bool) -> tuple[int, int]:
        """How many of the public (or hidden) checks passed, and how many there are."""
        chosen = [check for check in self.checks if check.public == public]
        return sum(check.status == "passed" for check in chosen), len(chosen)

    @property
    def hidden_only_failure(self) -> bool:
        """True when every public check passes and a hidden one does not: only grading shows this mistake."""
        public, hidden = self.counts(True), self.counts(False)
        return public[0] == public[1] > 0 and hidden[0] < hidden[1]

    @property
    def grader_fault(self) -> bool:
        """True when every check that did not pass failed for a reason of the grader's own."""
        failing = [check for check in self.checks if check.status != "passed"]
        return bool(failing) and all(check.by_grader for check in failing)

    def __post_init__(self):
        # every function of the exercise, in its order; none earned where no check counted
        exercise = BY_NAME[self.name]
        self.functions = {
            name: dict(self.functions.get(name) or _none(share))
            for name, share in zip(exercise.functions, exercise.shares)
        }

    def to_json(self) -> dict:
        """This exercise as check.schema.json writes it."""
        return {
            "name": self.name,
            "status": self.status,
            "points": self.points,
            "max_points": self.max_points,
            "checks": [check.to_json() for check in self.checks],
            "public": dict(zip(("passed", "checks"), self.counts(True))),
            "hidden": dict(zip(("passed", "checks"), self.counts(False))),
            "files": dict(self.files),
            "same_as_reference": self.same_as_reference,
            "functions": {name: dict(points) for name, points in self.functions.items()},
        }


@dataclass
class Report:
    """The verdicts of one run, in lesson order, and the Hypothesis seed that produced them."""

    exercises: list[ExerciseResult]
    seed: int
    isolation: str = "none"  # how the student's code was confined: namespaces, user or none
    checks: str = "all"  # which checks ran: "all" (public and hidden) or "public"

    def public_counts(self) -> tuple[int, int]:
        """How many public checks passed over the exercises run, and how many ran."""
        counts = [exercise.counts(True) for exercise in self.exercises]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    @property
    def points(self) -> float:
        """The points earned over the exercises run."""
        return sum(exercise.points for exercise in self.exercises)

    @property
    def max_points(self) -> float:
        """The points available over the exercises run."""
        return sum(exercise.max_points for exercise in self.exercises)

    @property
    def passed(self) -> bool:
        """True when every exercise run passed."""
        return all(exercise.status == "passed" for exercise in self.exercises)

    def to_json(self) -> dict:
        """The report exactly as check.schema.json fixes it."""
        return {
            "total": {"points": self.points, "max_points": self.max_points},
            "checks": self.checks,
            "isolation": self.isolation,
            "seed": self.seed,
            "exercises": [exercise.to_json() for exercise in self.exercises],
        }

    @classmethod
    def from_json(cls, data: dict, seed: int = 0) -> "Report":
        """A report read back from its JSON form."""
        exercises = [
            ExerciseResult(
                name=e["name"],
                status=e["status"],
                points=float(e["points"]),
                max_points=float(e["max_points"]),
                checks=[
                    CheckResult(
                        c["id"],
                        c["status"],
                        c.get("message", ""),
                        c.get("fault") == "grader",
                        public=c.get("public") is True,
                        printed=c.get("printed", ""),
                        functions=dict(c.get("functions", {})),
                        mistake=str(c.get("mistake", "")),
                    )
                    for c in e["checks"]
                ],
                note=e.get("note", ""),
                cause=e.get("cause", ""),
                files=dict(e.get("files", {})),
                same_as_reference=bool(e.get("same_as_reference", False)),
                functions={name: dict(points) for name, points in e.get("functions", {}).items()},
            )
            for e in data["exercises"]
        ]
        return cls(
            exercises,
            seed=int(data.get("seed", seed)),
            isolation=data.get("isolation", "none"),
            checks=data.get("checks", "all"),
        )


def exercise_status(checks: list[CheckResult]) -> str:
    """An exercise's status from its checks: an error wins, then untouched stubs, then failures.

    A function that stops only in an earlier one that is a stub, and passes with the reference's standing in, is
    written: its exercise has failed, not "not started".
    """
    statuses = {check.status for check in checks}
    if not checks or "error" in statuses:
        return "error"
    if statuses == {"not_started"} and not any(
        "passed" in check.functions.values() for check in checks
    ):
        return "not_started"  # stubs alone: no function passes, even with the reference of an earlier one standing in
    return "passed" if statuses == {"passed"} else "failed"


SCORING_VAR = "ATTENTION_BY_HAND_SCORING"  # "all-or-nothing": set by the instructor's options of batch, nbgrader and Gradescope
ALL_OR_NOTHING = "all-or-nothing"


def score_all_or_nothing() -> None:
    """From now on, in this process and those it starts, an exercise earns its points only when every check passes."""
    os.environ[SCORING_VAR] = ALL_OR_NOTHING


def partial_points(exercise: Exercise, checks: list[CheckResult]) -> float:
    """The exercise's points: all when every check passes, else the sum of its functions' (function_points); all or nothing when the course chose so."""
    if not checks:
        return 0.0
    if all(check.status == "passed" for check in checks):
        return float(exercise.points)
    if os.environ.get(SCORING_VAR) == ALL_OR_NOTHING:
        return 0.0
    return sum(earned["points"] for earned in function_points(exercise, checks).values())


def function_points(exercise: Exercise, checks: list[CheckResult]) -> dict[str, dict]:
    """Each function's points: its share times the share of its own checks that pass, rounded down to a half point.

    None while it passes none of the checks of what it computes (a stub, a `pass`: guards alone) or
    fails a defining one (sgd_step moving downhill). A check counts for the functions it gives a verdict
    (grader.check.checks.judged); one recorded without (an older record) for those it called. A check
    of a later function that fails only because of this one (it passes with the reference's standing in)
    counts for this one only when it passes every check of its own: else those already judge it, and
    the same mistake earns the same points whether the later function calls it or not.
    """
    found: dict[str, dict] = {}
    for function in exercise.functions:
        own: list[tuple[str, str]] = []  # (role, verdict) of its own checks
        caused: list[tuple[str, str]] = []  # of later functions' checks it alone made fail
        for check in checks:
            told = _verdicts(exercise, check)
            if function in told:
                # another function passed it: this one is the cause
                came = told[function] != "passed" and "passed" in told.values()
                (caused if came else own).append(("work" if came else check.role, told[function]))
        counted = own + caused if own and all(told == "passed" for _, told in own) else own
        passed = sum(told == "passed" for _, told in counted)
        works = any(told == "passed" for role, told in counted if role != "guard")
        defined = all(told == "passed" for role, told in counted if role == "defining")
        share = exercise.share(function)
        earned = share * passed / len(counted) if works and defined else 0.0
        found[function] = {
            "points": math.floor(2 * earned) / 2,
            "max_points": share,
            "passed": passed,
            "checks": len(counted),
        }
        if passed and not (works and defined):
            found[function]["why"] = (
                "it fails its defining check"
                if not defined
                else "it passes only checks of how it treats its inputs"
            )
    return found


def _none(share: float) -> dict:
    """The points of a function no check counted for."""
    return {"points": 0.0, "max_points": share, "passed": 0, "checks": 0}


def _verdicts(exercise: Exercise, check: CheckResult) -> dict[str, str]:
    """The verdict a check gives each function it counts for."""
    return check.functions or dict.fromkeys(check.calls or exercise.functions, check.status)
