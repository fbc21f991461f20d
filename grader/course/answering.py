"""What `grader batch` does with each row once its submission is graded, before the row is written.

In this order: what needs the instructor is noted for the end of the run (a module byte for byte the
reference, a confinement weaker than asked or not apart, a fault of the grader's), read from the
check's JSON, never from a message; the late policy takes its share off the total, where the route
gives the submission's time; the instructor's overrides are applied (grader/course/overrides.py); a
regrade of a student who had a row is logged beside the grades; and, with --feedback, the student's
report is written. Each step is its own module; this one only puts them in order.
"""

import datetime
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from grader import outlet
from grader.course import feedback, late, overrides
from grader.course.progress import Progress
from grader.sandbox import isolation
from grader.sandbox.intake import Upload

COPIED = "byte for byte the kit's reference solution"
WEAKER = "graded with a weaker confinement than asked"
FAULTS = "a fault of the grader's (the next run regrades them)"
NO_TIME = "no submission time, so no late penalty (an LMS download carries none)"


class Asked(NamedTuple):
    """What the instructor asked of batch beyond the grades: --feedback DIR, --late-policy TEXT, --due WHEN."""

    feedback: Path | None = None
    late_policy: str = ""
    due: str = ""

    def problem(self) -> str:
        """What is wrong with these options, in words that say what to do, or ""."""
        if self.late_policy:
            try:
                late.parse(self.late_policy)
            except late.PolicyError as error:
                return f"--late-policy: {error}."
            if not self.due:
                return "--late-policy needs --due, the due date and time, such as 2025-05-01T23:59+02:00."
        if self.due and late.moment(self.due) is None:
            return f"--due {self.due!r}: write the due date and time as ISO 8601, such as 2025-05-01T23:59+02:00."
        if (
            self.feedback is not None
            and not Path(self.feedback).is_dir()
            and not Path(self.feedback).parent.is_dir()
        ):
            return f"--feedback {self.feedback}: its folder {Path(self.feedback).parent} does not exist: create it or choose another."
        return ""


NOTHING = Asked()  # no feedback, no late policy


@dataclass
class Answering:
    """The settings and the state that every graded row of one batch passes through."""

    csv_file: Path
    rows: list[dict]  # the rows as the run began, to tell a regrade from a first grading
    progress: Progress
    feedback: Path | None = None
    policy: late.Policy | None = None
    due: datetime.datetime | None = None
    entries: list[dict] = field(default_factory=list)
    before: dict[str, dict] = field(default_factory=dict)

    def __post_init__(self):
        self.log = overrides.log_of(self.csv_file)
        self.entries = overrides.read(self.log)
        self.before = {row["student"]: row for row in self.rows}
        self.asked = os.environ.get(isolation.TIER_VAR, "")

    @classmethod
    def start(
        cls, csv_file: Path, rows: list[dict], total: int, asked: Asked = NOTHING
    ) -> "Answering":
        """The answering of a batch of total submissions, as asked (asked.problem() said nothing)."""
        if asked.feedback is not None:
            Path(asked.feedback).mkdir(exist_ok=True)
        policy = late.parse(asked.late_policy) if asked.late_policy else None
        return cls(
            csv_file,
            rows,
            Progress(total),
            asked.feedback,
            policy,
            late.moment(asked.due) if asked.due else None,
        )

    def graded(self, upload: Upload, row: dict, result: Path | None) -> dict:
        """The row as it is written: noted, penalised when late, overridden, logged if a regrade, and answered."""
        report = read_report(result)
        self.notice(row, report)
        notes = []
        if self.policy is not None:
            row, note = self.late(upload, row)
            notes += [note] if note else []
        settled = overrides.settle_row(row, self.entries)
        mine = overrides.latest(self.entries).get(row["student"], {})
        notes += [overrides.said(entry) for entry in mine.values()]
        self.regraded(settled)
        if self.feedback is not None:
            feedback.write(self.feedback, upload.key, settled, report, notes)
        return settled

    def notice(self, row: dict, report: dict | None) -> None:
        """Keep for the end what needs the instructor, from the check's JSON and the row's own status."""
        who = outlet.terminal(row["student"])
        if report is not None:
            copied = [
                f"{e['name']}.py" for e in report.get("exercises", []) if e.get("same_as_reference")
            ]
            if copied:
                self.progress.note(COPIED, f"{who}: {', '.join(copied)}")
        tier = row.get("isolation", "")
        if tier and (tier != self.asked if self.asked else tier not in isolation.APART):
            self.progress.note(
                WEAKER,
                f"{who}: {tier}"
                + (
                    f", not {self.asked}"
                    if self.asked
                    else ", which does not keep submissions apart"
                ),
            )
        if row.get("status") == "fault":
            self.progress.note(FAULTS, f"{who}: {row.get('reason', '')[:200]}")

    def late(self, upload: Upload, row: dict) -> tuple[dict, str]:
        """The row with the late policy applied where the upload's time is known; what it cost, for the feedback."""
        submitted = next(
            (when for s in upload.sources if (when := late.nbgrader_timestamp(s.path))), None
        )
        if submitted is None or self.due is None or self.policy is None:
            self.progress.note(NO_TIME, "")  # counted: a download's every row would be named
            return row, ""
        seconds = late.late_by(submitted, self.due)
        if seconds <= 0:
            return row, ""
        total = late.penalised_total(float(row.get("total") or 0), self.policy, seconds)
        note = late.said(self.policy, seconds)
        reason = "; ".join([note, *([row["reason"]] if row.get("reason") else [])])
        return row | {"total": f"{total:.1f}", "reason": outlet.csv_cell(reason)}, note

    def regraded(self, row: dict) -> None:
        """Log a regrade of a student who had a row: from what total to what, and why it was graded again."""
        old = self.before.get(row["student"])
        if old is None:
            return
        if old.get("status") == "fault":
            why = "the last grading was a fault of the grader's"
        elif any(old.get(c, "") != row.get(c, "") for c in row if c.endswith(" sha256")):
            why = "the files changed since the last grading"
        else:
            why = "asked (--regrade or --force)"
        told = {
            "kind": "regrade",
            "student": row["student"],
            "exercise": "total",
            "points": row.get("total", ""),
            "why": why,
        }
        overrides.record(self.log, told | {"before": old.get("total", "")})


def read_report(result: Path | None) -> dict | None:
    """The check's JSON, or None where there is none (an upload not taken, a check stopped)."""
    if result is None:
        return None
    try:
        report = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (
        report if isinstance(report, dict) and isinstance(report.get("exercises"), list) else None
    )
