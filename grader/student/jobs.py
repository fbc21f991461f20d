"""The watch's checks: each in a fresh Python process, which saves its verdict, and one kept ready for the next save.

The one kept ready has imported the grader and the checks and chosen the confinement before the
save, so a save's verdict waits for none of that.
"""

import os
import threading
from pathlib import Path

from grader.paths import KIT_ROOT
from grader.sandbox import launcher
from grader.sandbox.tree import ONE_THREAD
from grader.student.recheck import READY, SAVED


def recheck_command(folder: Path, names: list[str]) -> list[str]:
    """The command that checks these exercises and saves their verdict, with this kit's code (the one installed may be another)."""
    return launcher.module("grader.student.recheck", str(folder), *names, root=KIT_ROOT)


class Recheck:
    """One run of the checks in a fresh Python process, which saves the verdict (no fork: it works on every OS).

    names None: a recheck made ready ahead of a save (the checks imported, the confinement chosen), told what to check by go().
    """

    def __init__(self, folder: Path, names: list[str] | None):
        self.failure = ""
        command = recheck_command(folder, names or [READY])
        self.child = launcher.Child(
            command,
            env={**os.environ, **ONE_THREAD},
            output="events",
            feed=names is None,
            scratch=True,
        )
        # the verdict is saved: the job's stopping of its workers need not be waited for
        self.saved = threading.Event()
        threading.Thread(target=self._listen, daemon=True, name="watch-job").start()

    def _listen(self) -> None:
        """Thread: the job's word that the verdict is saved (grader.student.recheck.SAVED)."""
        lines = self.child.process.stdout
        if lines is None:
            return
        try:
            for line in lines:
                if line.strip() == SAVED.encode():
                    self.saved.set()
        except (OSError, ValueError):  # closed by stop()
            pass

    def go(self, names: list[str]) -> "Recheck":
        """Check these exercises now."""
        self.child.send(" ".join(names))
        return self

    def running(self) -> bool:
        """True until the verdict is saved or the run has ended; then its failure, if any, is in .failure."""
        if self.saved.is_set():
            return False
        code = self.child.returncode
        if code is None:
            return True
        if code != 0 and not self.failure:
            said = self.child.output().strip()
            self.failure = (
                said.splitlines()[-1] if said else f"its process ended with status {code}"
            )
        return False

    def stop(self) -> None:
        """End the run if it is still going, with the workers it started."""
        self.child.close()
