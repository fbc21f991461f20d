"""nbgrader's late penalty by the kit's policy: `grader nbgrader --late-policy "10%/day,max 3 days"` configures it.

nbgrader's AssignLatePenalties asks its plugin for each late notebook's penalty, given how late nbgrader
found it (timestamp.txt against the assignment's due date in the gradebook); this plugin answers with
the share the policy takes (grader/course/late.py), the rest rounded down to a half point as the points are.
"""

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Unicode

from grader.course import late


class KitLatePenalty(LateSubmissionPlugin):
    """The points a late notebook loses under the kit's policy ("" for none)."""

    policy = Unicode(
        "", help='The late policy, such as "10%/day,max 3 days" (grader/course/late.py).'
    ).tag(config=True)

    def late_submission_penalty(
        self, student_id: str, score: float, total_seconds_late: float
    ) -> float | None:
        if not self.policy or total_seconds_late <= 0:
            return None
        kept = late.penalised_total(
            float(score or 0.0), late.parse(self.policy), total_seconds_late
        )
        self.log.info(
            "Late policy %s: %s keeps %s of %s points", self.policy, student_id, kept, score
        )
        return float(score or 0.0) - kept
