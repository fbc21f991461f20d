"""The verdicts: one result per check, per exercise, and the report over the exercises run."""

import math
import os
from dataclasses import dataclass, field

from grader.sandbox.codec import shown

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
    example: dict | None = None  # the failing call's function and encoded arguments, for `grader try`; not in the JSON
    calls: tuple[str, ...] = ()  # the functions of its exercise the check called, in the exercise's order; not in the JSON
    mistake: str = ""  # the known mistake a failed check named (grader/check/diagnosis.py), never parsed from the message

    def __post_init__(self):
        self.message, self.printed = shown(self.message), shown(self.printed)  # student text: every file and screen can hold it

    def to_json(self) -> dict:
        """This check as check.schema.json writes it; "fault": "grader" marks an error that is the grader's."""
        told = {"id": self.id, "status": self.status, "message": self.message, "public": self.public}
        told |= {"mistake": self.mistake} if self.mistake else {}
        return told | ({"fault": "grader"} if self.by_grader else {}) | ({"printed": self.printed} if self.printed else {})


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
    files: dict[str, str] = field(default_factory=dict)  # the sha256 of each file the verdict depends on
    same_as_reference: bool = False  # the exercise's own module is the reference's, byte for byte

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
                        mistake=str(c.get("mistake", "")),
                    )
                    for c in e["checks"]
                ],
                note=e.get("note", ""),
                cause=e.get("cause", ""),
                files=dict(e.get("files", {})),
                same_as_reference=bool(e.get("same_as_reference", False)),
            )
            for e in data["exercises"]
        ]
        return cls(exercises, seed=int(data.get("seed", seed)), isolation=data.get("isolation", "none"), checks=data.get("checks", "all"))


def exercise_status(checks: list[CheckResult]) -> str:
    """An exercise's status from its checks: an error wins, then untouched stubs, then failures."""
    statuses = {check.status for check in checks}
    if not checks or "error" in statuses:
        return "error"
    if statuses == {"not_started"}:
        return "not_started"
    return "passed" if statuses == {"passed"} else "failed"


SCORING_VAR = "ATTENTION_BY_HAND_SCORING"  # "all-or-nothing": set by the instructor's options of batch, nbgrader and Gradescope
ALL_OR_NOTHING = "all-or-nothing"


def score_all_or_nothing() -> None:
    """From now on, in this process and those it starts, an exercise earns its points only when every check passes."""
    os.environ[SCORING_VAR] = ALL_OR_NOTHING


def partial_points(max_points: float, checks: list[CheckResult]) -> float:
    """max_points times the share of checks passed, rounded down to a half point; all or nothing when the course chose so."""
    if not checks:
        return 0.0
    passed = sum(check.status == "passed" for check in checks)
    if passed == len(checks):
        return float(max_points)
    if os.environ.get(SCORING_VAR) == ALL_OR_NOTHING:
        return 0.0
    return math.floor(2 * max_points * passed / len(checks)) / 2
