"""`python -m grader.student.recheck FOLDER EXERCISE ...`: check and save the verdict, for `grader watch`.

Run as a process of its own for every check, so that watching needs no fork and a run cut short
by a save is simply ended. With --ready instead of exercises it gets ready first (the grader
imported, the confinement chosen, SPARES workers started with numpy loaded) and then waits for
a line naming the exercises: the watch keeps one ready for the next save. A fault of the grader's
is printed on stderr, for the watch to show.
"""

import sys
from pathlib import Path

from grader.check.cache import checked_report
from grader.sandbox.isolation import choose_soon

READY = "--ready"
SAVED = "saved"  # the line printed once the verdict is saved: the watch shows it while the run stops its workers
SPARES = 2  # workers a check of one exercise starts: training's has two (grader.check.checks.workers)


def main(folder: str, *names: str) -> int:
    spares = []
    try:
        if names == (READY,):
            spares = ready()
            names = tuple(sys.stdin.readline().split())
        else:
            choose_soon()  # the confinement's probe runs while the checks are imported
        if names:
            checked_report(Path(folder), list(names), by="watch", spares=spares)
            print(SAVED, flush=True)
    except Exception as error:  # the watch shows it; nothing of the grader's traceback reaches the student
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1
    finally:
        for spare in spares:
            spare.stop()  # a spare the run did not use (one it used is stopped already)
    return 0


def ready() -> list:
    """Start what every check needs before the files are known: the confinement and SPARES workers."""
    from grader.check import collector  # noqa: F401  (Hypothesis and numpy, imported now)
    from grader.check.checks import examples, scale, strategies, trained, where  # noqa: F401  (what the check files import)
    from grader.sandbox import isolation

    scale.warm()
    try:
        return [isolation.spare() for _ in range(SPARES)]
    except (isolation.IsolationError, OSError):
        return []  # the run starts its own workers, or says why it cannot


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
