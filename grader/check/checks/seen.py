"""What one check has seen fail so far: a known mistake is named, and an output called right, only when true of every failure.

Hypothesis runs a check on many inputs and shows the smallest that fails. A mistake can give the
student's output on that small input without being what their code does (dividing by √T gives
the same as not dividing at all when T = 1), and an output can be right there and wrong on the
larger inputs the check tried first. So every failure of a check is kept here until the next
check starts: the known mistakes whose own code gave the student's output on each of them, and
the outputs that were ever wrong.
"""


class Seen:
    """The failures of the check that runs now."""

    def __init__(self):
        self.mistakes: list[str] | None = (
            None  # the known mistakes that matched every failure so far; None before the first
        )
        self.wrong: dict[
            str, set[str]
        ] = {}  # the outputs ever wrong, by the function they come from
        self.probed: set = set()  # what a diagnosis has run the student's code on a general input for (grader.check.diagnosis)

    def forget(self) -> None:
        """A check begins: nothing seen."""
        self.mistakes, self.wrong, self.probed = None, {}, set()

    def first(self, what) -> bool:
        """True the first time this check asks about what, then False."""
        seen = what in self.probed
        self.probed.add(what)
        return not seen

    def named(self, matching) -> list[str]:
        """Keep a failure, with the known mistakes whose code gives the student's output on it; those that did on every one.

        A failure with none (a wrong shape, a NaN, a property) leaves no mistake to name for the rest of the check.
        """
        matching = list(matching)
        self.mistakes = (
            matching
            if self.mistakes is None
            else [name for name in matching if name in self.mistakes]
        )
        return self.mistakes

    def ever_wrong(self, function: str, wrong) -> set[str]:
        """Keep the outputs of a function wrong on this failure; those wrong on this one or an earlier one."""
        found = self.wrong.setdefault(function, set())
        found.update(wrong)
        return found


# the checks of a run run one at a time, each after Submission.new_check(), which forgets
SEEN = Seen()
