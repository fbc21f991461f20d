"""`python -m grader.student.recheck FOLDER EXERCISE ...`: check and save the verdict, for `grader watch`.

Run as a process of its own for every check, so that watching needs no fork and a run cut short
by a save is simply ended. A fault of the grader's is printed on stderr, for the watch to show.
"""

import sys
from pathlib import Path

from grader.check.cache import checked_report


def main(folder: str, *names: str) -> int:
    try:
        checked_report(Path(folder), list(names), by="watch")
    except Exception as error:  # the watch shows it; nothing of the grader's traceback reaches the student
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
