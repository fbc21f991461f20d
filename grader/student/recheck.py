"""`python -m grader.student.recheck FOLDER EXERCISE ...`: check and save the verdict, for `grader watch`.

Run as a process of its own for every check, so that watching needs no fork and a run cut short
by a save is simply ended. With --ready instead of exercises it gets ready first (the grader and
the checks' modules imported, the confinement chosen) and then waits for a line naming the
exercises: the watch keeps one ready for the next save. A fault of the grader's is printed on
stderr, for the watch to show.
"""

import sys
from pathlib import Path

from grader.check.state import checked_report
from grader.sandbox.isolation import choose_soon

READY = "--ready"
SAVED = "saved"  # the line printed once the verdict is saved: the watch shows it while the run stops its workers


def main(folder: str, *names: str) -> int:
    try:
        if names == (READY,):
            ready()
            names = tuple(sys.stdin.readline().split())
        else:
            choose_soon()  # the confinement's probe runs while the checks are imported
        if names:
            checked_report(Path(folder), list(names), by="watch")
            print(SAVED, flush=True)
    except (
        Exception
    ) as error:  # the watch shows it; nothing of the grader's traceback reaches the student
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


def ready() -> None:
    """Do what every check needs before the files are known: import the checks' modules and choose the confinement."""
    from grader.check import collector  # noqa: F401  (Hypothesis and numpy, imported now)
    from grader.check.checks import examples, scale, strategies, trained, where  # noqa: F401  (what the check files import)
    from grader.sandbox import isolation

    scale.warm()
    try:
        isolation.choose()
    except isolation.IsolationError:
        pass  # the run says why it cannot start a worker


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
