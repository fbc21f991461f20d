"""What `grader report` counts of a class: statuses, the totals' histogram, each exercise's outcomes, who failed each check.

Shared by the terminal's report (class_report.py) and the page (class_page.py).
"""

from collections import Counter
from dataclasses import dataclass, field

from grader import outlet
from grader.course.class_rows import Student
from grader.exercises import EXERCISES

SLOWEST = 5  # submissions listed by time
STATUS_WORDS = {  # the rows' statuses, in words a reader new to them understands
    "passed": "passed every check",
    "graded": "graded, with some check not passing",
    "unreadable": "unreadable (a module missing or a link)",
    "timeout": "stopped at the time limit",
    "error": "not graded (the grader stopped: see the CSV's reason)",
    "fault": "not graded (a fault in the grader: the next grader batch run regrades it)",
    "missing": "no submission in nbgrader's gradebook",
}
NOT_GRADES = ("fault", "missing")  # rows whose total is no grade: left out of the histogram
# an exercise's statuses
OUTCOMES = {"failed": "some checks fail", "not_started": "not started", "error": "did not run"}
DID_NOT_RUN = "Did not run: its module could not be imported, or it hung or crashed, so its checks stopped (not counted as failed below)."
NO_CHECKS = "nbgrader's gradebook holds points per exercise, not which checks failed: `grader batch` on submitted/*/ASSIGNMENT gives those."
BINS = (
    [("0", 0, 0), ("<10", 0.01, 9.99)]
    + [(f"{lo}-{lo + 9}", lo, lo + 9.99) for lo in range(10, 100, 10)]
    + [("100", 100, 100)]
)


@dataclass
class ClassReport:
    """What the class did, counted."""

    students: list[Student]
    source: str  # "batch" or "gradebook"
    statuses: Counter = field(default_factory=Counter)
    # check id -> the students (indices) who failed it, most failed first
    by_check: dict[str, list[int]] = field(default_factory=dict)
    by_mistake: dict[str, list[int]] = field(default_factory=dict)
    histogram: list[tuple[str, int]] = field(default_factory=list)

    @property
    def graded(self) -> list[Student]:
        return [s for s in self.students if s.graded]


def counted(students: list[Student], source: str) -> ClassReport:
    """The counts of the class report."""
    report = ClassReport(students, source, Counter(s.status for s in students))
    checks: dict[str, list[int]] = {}
    mistakes: dict[str, list[int]] = {}
    for number, student in enumerate(students):
        if student.graded:
            for check in dict.fromkeys(student.failed):
                checks.setdefault(check, []).append(number)
            for mistake in dict.fromkeys(student.mistakes):
                mistakes.setdefault(mistake, []).append(number)
    report.by_check = dict(sorted(checks.items(), key=lambda item: (-len(item[1]), item[0])))
    report.by_mistake = dict(sorted(mistakes.items(), key=lambda item: (-len(item[1]), item[0])))
    totals = [s.total for s in students if s.status not in NOT_GRADES]
    report.histogram = [(label, sum(lo <= t <= hi for t in totals)) for label, lo, hi in BINS]
    return report


def exercise_rows(report: ClassReport) -> list[tuple]:
    """Per exercise: (name, points, mean, how many got full points, of how many, count of each outcome)."""
    graded = report.graded
    rows = []
    for e in EXERCISES:
        got = [s.points.get(e.name, 0.0) for s in graded]
        outcomes = Counter(s.statuses.get(e.name, "") for s in graded)
        mean = sum(got) / len(got) if got else 0.0
        rows.append(
            (
                e.name,
                e.points,
                mean,
                sum(p >= e.points for p in got),
                len(got),
                *(outcomes[o] for o in OUTCOMES),
            )
        )
    return rows


def summary(report: ClassReport) -> str:
    """How many submissions, by status, in words."""
    order = sorted(
        report.statuses,
        key=lambda s: list(STATUS_WORDS).index(s) if s in STATUS_WORDS else len(STATUS_WORDS),
    )
    said = ", ".join(
        f"{report.statuses[status]} {STATUS_WORDS.get(status, outlet.terminal(status))}"
        for status in order
    )
    return f"{len(report.students)} submissions: {said}."
