"""What the student's functions printed during a check: the failing example's in its message, all of it on request."""

SHOWN_LINES = 12  # lines of the failing example's output in a failure message
KEPT = 64 << 10  # characters of a whole check's output kept for `grader check --output`


class Printed:
    """The output of each call, for the example being run and for the whole check."""

    def __init__(self):
        self.example: list[
            tuple[str, str]
        ] = []  # (function, what it printed) of the current example's calls
        self.check: list[
            tuple[str, str]
        ] = []  # the same for every call of the check, up to KEPT characters
        self.size = 0

    def heard(self, function: str, text: str):
        """Keep what one call of function printed."""
        if not text:
            return
        self.example.append((function, text))
        if self.size < KEPT:
            self.check.append((function, text))
            self.size += len(text)

    def new_example(self):
        """Hypothesis tries another input: forget the last example's output."""
        self.example.clear()

    def new_check(self):
        """Another check starts."""
        self.example.clear()
        self.check.clear()
        self.size = 0

    def told(self, exercise: str) -> str:
        """The failing example's output, as the end of a failure message ("" when nothing was printed)."""
        if not self.example:
            return ""
        lines = shown(self.example, numbered=len(self.example) > 1)
        more = len(lines) - SHOWN_LINES
        text = "\n".join(f"  {line}" for line in lines[:SHOWN_LINES])
        tail = (
            f"\n  ... {more} more lines: `grader check {exercise} --output` shows everything it printed."
            if more > 0
            else ""
        )
        return f"\nWhat your code printed on this example:\n{text}{tail}"

    def everything(self) -> str:
        """All the check's output, call by call (capped at KEPT characters)."""
        dropped = ["... (more, not kept)"] if self.size >= KEPT else []
        return "\n".join(shown(self.check) + dropped)


def shown(calls: list[tuple[str, str]], numbered: bool = False) -> list[str]:
    """Each call's output under its function's name: on the same line when it is one line."""
    lines = []
    for n, (function, text) in enumerate(calls, 1):
        head = f"{function}, call {n}:" if numbered else f"{function}:"
        body = text.rstrip("\n").splitlines() or [""]
        lines += (
            [f"{head} {body[0]}"] if len(body) == 1 else [head, *(f"  {line}" for line in body)]
        )
    return lines
