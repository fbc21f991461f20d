"""A late policy, off unless the instructor names one: "10%/day", "5%/hour", "10%/day,max 3 days".

Each day (or hour) late, begun, takes the percent off the points earned; past the most days, the work
earns 0. The times come from the route, where it has them: nbgrader's timestamp.txt beside a submission
(with the due date the instructor gives batch), Gradescope's submission_metadata.json (its created_at
and the assignment's due date, the student's own where Gradescope gives one), and nbgrader's autograde
itself (grader/course/nbgrader/late.py, its due dates). A route without times (a Moodle or Canvas
download) is graded without a penalty, and its rows say so.
"""

import datetime
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox.walk import NotRegular, open_regular

UNITS = {"day": 86400.0, "hour": 3600.0}
POLICY = re.compile(
    r"\s*(?P<percent>\d+(?:\.\d+)?)\s*%\s*(?:/|per)\s*(?P<unit>day|hour)\s*(?:,\s*max\s+(?P<most>\d+)\s*(?P<units>days?|hours?))?\s*"
)
TIMESTAMP_BYTES = 256  # nbgrader's timestamp.txt holds one line
METADATA_BYTES = 1 << 20  # Gradescope's submission_metadata.json, with its previous submissions


class PolicyError(ValueError):
    """A late policy that cannot be read; the message says how to write one."""


@dataclass(frozen=True)
class Policy:
    """percent off the points per unit (seconds) late, begun; past most seconds late, everything."""

    percent: float
    unit: float
    most: float | None
    text: str

    def fraction(self, seconds_late: float) -> float:
        """The share of the points taken off for being seconds_late late (0 when on time)."""
        if seconds_late <= 0:
            return 0.0
        if self.most is not None and seconds_late > self.most:
            return 1.0
        # a unit begun counts whole, however small the part (5e-324 s too)
        units = max(1, math.ceil(seconds_late / self.unit))
        return min(1.0, self.percent / 100 * units)


def parse(text: str) -> Policy:
    """The policy written as "10%/day", "5%/hour" or "10%/day,max 3 days"."""
    match = POLICY.fullmatch(text or "")
    if not match or float(match["percent"]) > 100:
        raise PolicyError(
            f"cannot read the late policy {text!r}: write it as a percent per day or hour, and the most days late, "
            'such as "10%/day", "5%/hour" or "10%/day,max 3 days"'
        )
    most = float(match["most"]) * UNITS[match["units"].rstrip("s")] if match["most"] else None
    return Policy(float(match["percent"]), UNITS[match["unit"]], most, text.strip())


def moment(text: str) -> datetime.datetime | None:
    """A time as nbgrader and Gradescope write it (ISO 8601, "2024-05-01 10:12:33.123456 UTC"), in UTC when it names no zone."""
    text = (text or "").strip()
    text = text[:-4] + "+00:00" if text.endswith(" UTC") else text
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=datetime.UTC)


def late_by(submitted: datetime.datetime, due: datetime.datetime) -> float:
    return (submitted - due).total_seconds()


def span(seconds: float) -> str:
    """Seconds late in words: "2 days 3 h", "40 min"."""
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    if days:
        return f"{days} day{'s' if days != 1 else ''}" + (f" {hours} h" if hours else "")
    return f"{hours} h {rest // 60} min" if hours else f"{max(rest // 60, 1)} min"


def said(policy: Policy, seconds_late: float) -> str:
    """What lateness cost, in words for the row and the student."""
    taken = policy.fraction(seconds_late)
    return (
        f"submitted {span(seconds_late)} late: {taken:.0%} of the points taken off ({policy.text})"
    )


def read_small(path: Path, most: int) -> str:
    """A regular file's text, at most `most` bytes; no link followed."""
    with open_regular(None, path) as stream:
        return stream.read(most).decode("utf-8", "replace")


def nbgrader_timestamp(folder: Path) -> datetime.datetime | None:
    """When nbgrader says a submission was made: timestamp.txt in its submitted/STUDENT/ASSIGNMENT folder, if any."""
    base = folder.parent if folder.name == "exercises" else folder
    try:
        return moment(read_small(base / "timestamp.txt", TIMESTAMP_BYTES))
    except (NotRegular, OSError):
        return None


def gradescope_times(root: Path) -> tuple[datetime.datetime | None, datetime.datetime | None]:
    """(submitted, due) from Gradescope's submission_metadata.json: the first student's own due date where it gives one."""
    try:
        data = json.loads(read_small(root / "submission_metadata.json", METADATA_BYTES))
    except (NotRegular, OSError, ValueError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    users, assignment = data.get("users"), data.get("assignment")
    users = users if isinstance(users, list) else []
    own = [
        u["assignment"].get("due_date")
        for u in users
        if isinstance(u, dict) and isinstance(u.get("assignment"), dict)
    ]
    due = next((d for d in own if d), None) or (
        assignment.get("due_date") if isinstance(assignment, dict) else None
    )
    return moment(str(data.get("created_at") or "")), moment(str(due or ""))


def penalised_total(total: float, policy: Policy, seconds_late: float) -> float:
    """The total after the penalty, rounded down to a half point as an exercise's points are."""
    return math.floor(2 * total * (1 - policy.fraction(seconds_late))) / 2
