"""`grader watch`: recheck an exercise every time one of the five files is saved."""

import dataclasses
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import click

from grader import kit, stops
from grader.check.report import submission_args
from grader.check.results import Report
from grader.check.state import State, live_fingerprints
from grader.exercises import BY_NAME, NAMES
from grader.paths import MODULES
from grader.student.jobs import Recheck
from grader.student.status import first_problem, next_step, points, resolve, shown
from grader.style import colour_on, mark, paint, shown_command

POLL = 0.05  # seconds between looks at the files (five stat calls each)
SETTLE = 0.03  # seconds a changed file is left before it is read: an editor may write a file in two steps
SHOWN_FAILURES = 3
# every mark the screen uses, by status
LEGEND = {
    "passed": "passes",
    "failed": "fails",
    "error": "cannot run",
    "not_started": "not started",
    "checking": "being checked",
    "unknown": "no verdict yet",
}


def watch(exercise: str | None = None, submission: Path | None = None) -> int:
    """Recheck on every save until Ctrl-C; 0 when stopped, 2 when the folder cannot be read."""
    folder = resolve(submission, "watch")
    if folder is None:
        return 2
    watcher = Watcher(folder, exercise)
    # Ctrl-C, and a closed terminal or a kill, end the watch alike, its jobs and their folders with it;
    # a signal already taken (ignored, as in a shell's background job) is left so
    with stops.handled_by(watcher.ctrl_c, [stop for stop in stops.STOPS if stops.ours(stop)]):
        return watched(watcher, folder)


def watched(watcher: "Watcher", folder: Path) -> int:
    """Run the watch until stopped; 0."""
    try:
        watcher.run()
    except KeyboardInterrupt:
        said = f"Your progress is saved: {shown_command('status', *submission_args(folder, False))} shows it."
        try:
            click.echo(f"\nStopped watching. {said}")
        except OSError:  # the terminal is gone
            pass
    finally:
        watcher.close()
    return 0


def snapshot(folder: Path) -> dict:
    """Each module file's modification time and size, None when it is missing."""
    files = {}
    for module in MODULES:
        try:
            info = (folder / f"{module}.py").stat()
            files[module] = (info.st_mtime_ns, info.st_size)
        except OSError:
            files[module] = None
    return files


class Watcher:
    """The loop: check the exercise being worked on first, then any other whose files changed."""

    def __init__(self, folder: Path, exercise: str | None):
        self.folder, self.fixed = folder, exercise
        self.files = snapshot(folder)
        self.where = submission_args(folder, False)  # the options that name the folder in a command
        # each exercise's fingerprint of the files as last saved: read once a save
        self.prints = live_fingerprints(folder)
        # the saved verdicts: read once a save, and once a check has saved its own
        self.state = State.load(folder)
        # (exercise, fingerprint) of runs that saved nothing
        self.tried: set[tuple[str, str]] = set()
        self.faults: dict[str, str] = {}  # exercise -> what stopped the grader from checking it
        self.screen = ""
        self.target, self.saved = exercise or self.first_unpassed(), None
        # the exercise being checked, since when (time.monotonic())
        self.checking, self.started = (None, 0.0)
        self.ready: Recheck | None = None  # a check process made ready ahead of the next save
        self.stopping = False  # Ctrl-C was pressed: the watch ends at its next pause

    def ctrl_c(self, *_) -> None:
        """The handler of SIGINT, SIGTERM and SIGHUP: stop at the next pause, never halfway through
        starting or ending a check's process (which would leave it or its temporary folder behind)."""
        self.stopping = True

    def pause(self, seconds: float, until: threading.Event | None = None) -> None:
        """Sleep (or until the event is set, if sooner); then end the watch (KeyboardInterrupt) if Ctrl-C was pressed."""
        if until is None:
            time.sleep(seconds)
        else:
            until.wait(seconds)
        if self.stopping:
            raise KeyboardInterrupt

    def run(self) -> None:
        """Check, show, wait for a save; forever."""
        self.ready = Recheck(self.folder, None)
        if not self.to_check():
            self.show()  # else the first check shows the screen
        while True:
            todo = self.to_check()
            changed = self.check(todo[0]) if todo else self.wait_for_save()
            if changed:
                self.after_save(changed)
            else:
                self.show()
                if todo[0] == self.target:
                    self.saved = None

    def after_save(self, changed: list[str]) -> None:
        """Work on the exercise just saved; show it at once when its files did not really change."""
        # of files saved together, the earliest in the lesson: later ones build on it
        self.target = self.fixed or changed[0]
        times = [self.files[m][0] / 1e9 for m in changed if self.files[m]]
        self.saved = max(times, default=time.time())
        if self.target not in self.to_check():
            self.show()

    def to_check(self) -> list[str]:
        """The exercises without a verdict on their current files: the target first, then lesson order."""
        fresh = self.state.fresh(self.prints)
        stale = [n for n in NAMES if n not in fresh and (n, self.prints[n]) not in self.tried]
        return sorted(stale, key=lambda n: n != self.target)

    def check(self, name: str) -> list[str]:
        """Check one exercise in a fresh process, which saves the verdict; the modules saved meanwhile.

        The job kept ready serves the exercise being worked on; another (one that builds on it) gets
        a job of its own, so that a save that cuts its check finds the ready one still ready.
        """
        target = name == self.target
        job = self.take_ready().go([name]) if target else Recheck(self.folder, [name])
        self.checking, self.started, drawn = name, time.monotonic(), 0
        try:
            self.show()  # while the process starts: the old verdict is no longer shown as current
            while job.running():
                # the verdict is shown as soon as the job says it is saved
                self.pause(POLL / 2, until=job.saved)
                if snapshot(self.folder) != self.files:
                    return self.wait_for_save()  # saved again: the next check replaces this one
                seconds = int(time.monotonic() - self.started)
                if colour_on() and seconds != drawn:
                    drawn = seconds
                    self.show()  # the clock, once a second; on a terminal only, where the screen is redrawn in place
        finally:
            self.checking = None
            job.stop()
            if target or self.ready is None:
                # for the next save, ready while the student edits
                self.ready = Recheck(self.folder, None)
        if job.failure:
            self.faults[name] = job.failure
        else:
            self.faults.pop(name, None)
        self.state = State.load(self.folder)
        if snapshot(self.folder) != self.files:
            # saved as the check ended: its verdict may be of the files before
            return self.wait_for_save()
        if name not in self.state.fresh(self.prints):
            # it saved nothing: do not run it again on the same files
            self.tried.add((name, self.prints[name]))
        return []

    def take_ready(self) -> "Recheck":
        """The job made ready ahead, or a new one when it has ended (it could not get ready)."""
        job, self.ready = self.ready, None
        return job if job is not None and job.running() else Recheck(self.folder, None)

    def close(self) -> None:
        """End the job kept ready."""
        if self.ready is not None:
            self.ready.stop()
            self.ready = None

    def wait_for_save(self) -> list[str]:
        """Block until a module file changes and stays still for a moment; the modules changed."""
        while True:
            now = snapshot(self.folder)
            if now != self.files:
                self.pause(SETTLE)
                now = snapshot(self.folder)
                changed = [m for m in MODULES if now[m] != self.files[m]]
                self.files = now
                if changed:
                    self.prints, self.state = (
                        live_fingerprints(self.folder),
                        State.load(self.folder),
                    )
                    return changed
            self.pause(POLL)

    def first_unpassed(self) -> str:
        """The first exercise in lesson order whose last verdict is not a pass."""
        known = self.state.last()
        return next(
            (name for name in NAMES if name not in known or known[name].status != "passed"),
            NAMES[-1],
        )

    def compose(self) -> str:
        """The screen: progress over the five with what each mark means, the verdict on the target, and what to do."""
        target, where = self.target, self.where
        known, fresh = self.state.last(), self.state.fresh(self.prints)
        report = Report(
            [known[n] if n in fresh else unvouched(known[n]) for n in NAMES if n in known],
            seed=self.state.seed,
        )
        # its check has begun: "checking", even if the job saved
        since = self.started if self.checking == target else None
        result = (
            None
            if since is not None
            else next((e for e in report.exercises if e.name == target and target in fresh), None)
        )
        if result is not None and result.status == "passed":
            advice = next_step(report, self.folder, watching=True)
        else:
            # an earlier exercise at fault is the one to fix
            fix = result.cause if result is not None and result.cause else target
            advice = (
                f"Edit {shown(self.folder)}{fix}.py and save to check it again; {shown_command('hint', fix, *where)} "
                f"gives a hint, and {shown_command('try', fix, *where)}, in another terminal, runs your functions "
                "where print() and breakpoint() work."
            )
        screen = f"{progress(report, fresh, self.checking)}\n{legend()}\n\n{verdict(target, result, since, where)}\n\n{advice}"
        for name, fault in self.faults.items():
            screen += "\n" + paint(f"The grader could not check {name}: {fault}", fg="red")
            screen += f"\n{shown_command('check', name, *where)} shows the whole message; watching goes on."
        return screen

    def show(self) -> None:
        """Draw the screen, unless it is the one on show and no save awaits its verdict."""
        screen = self.compose()
        if screen == self.screen and self.saved is None:
            return
        self.screen = screen
        if colour_on():
            click.clear()
        else:
            click.echo("-" * 60)
        header = f"grader watch · {shown(self.folder)} · {datetime.now():%H:%M:%S}"
        if self.saved is not None and self.checking is None:
            header += f" · {time.time() - self.saved:.1f} s after your save"  # with a verdict only
        click.echo(paint(header, dim=True))
        click.echo(screen)
        click.echo(paint("Watching for saves; Ctrl-C to stop.", dim=True))
        sys.stdout.flush()  # a pipe to tee or a log gets each screen as it comes


def unvouched(result):
    """A verdict on files since changed, without its root-cause note: the table shows the exercises it names as they are now."""
    return dataclasses.replace(result, note="", cause="")


def progress(report, fresh: dict, checking: str | None = None) -> str:
    """One line over the five exercises (a mark for the one being checked, a ? for a verdict still to come), and the points."""
    by_name = {e.name: e for e in report.exercises}
    marks = []
    for name in NAMES:
        if name in by_name and name in fresh:
            sign = mark(by_name[name].status)
        else:
            sign = mark("checking" if name == checking else "unknown")
        marks.append(f"{sign} {name}")
    # a verdict on files since changed counts for nothing
    current = Report([e for e in report.exercises if e.name in fresh], seed=report.seed)
    waiting = [name for name in NAMES if name not in fresh]
    later = (
        f", {len(waiting)} exercise{'s' if len(waiting) > 1 else ''} still to check"
        if waiting
        else ""
    )
    if kit.is_student_kit():
        return (
            "  ".join(marks)
            + "    {} of {} public checks pass".format(*current.public_counts())
            + later
        )
    total = sum(e.points for e in BY_NAME.values())
    return "  ".join(marks) + f"    {points(current.points)} of {points(total)} points" + later


def legend() -> str:
    """One line that says what each mark on the screen means."""
    return "  ".join(f"{mark(status)} {paint(words, dim=True)}" for status, words in LEGEND.items())


def verdict(name: str, result, since: float | None = None, where: tuple[str, ...] = ()) -> str:
    """The target's verdict (the first failing check in full, the others by name), or that it is being checked since then."""
    if result is None and since is not None:
        return (
            f"{mark('checking')} {name}: checking (started {int(time.monotonic() - since)} s ago)"
        )
    if result is None:
        return f"{mark('unknown')} {name}: no verdict yet."
    if result.status == "passed":
        which = " public" if kit.is_student_kit() else ""
        passes = paint(
            f"{mark('passed')} {name} passes all {len(result.checks)}{which} checks.",
            fg="green",
            bold=True,
        )
        # it passes, but with an earlier exercise failing
        return passes + (f"\n  {result.note}" if result.note else "")
    if result.status == "not_started":
        functions = BY_NAME[name].functions
        verb = "raises" if len(functions) == 1 else "raise"
        return f"{mark('not_started')} {name}: not started ({', '.join(functions)} still {verb} NotImplementedError)."
    failing = [c for c in result.checks if c.status in ("failed", "error")]
    passed = sum(c.status == "passed" for c in result.checks)
    word = "failing" if result.status == "failed" else "cannot run"
    which = " public" if kit.is_student_kit() else ""
    lines = [
        paint(
            f"{mark(result.status)} {name}: {word}, {passed} of {len(result.checks)}{which} checks pass",
            bold=True,
        )
    ]
    if result.note:
        lines.append(f"  {result.note}")
    if failing:
        message = failing[0].message.strip() or first_problem(result)
        lines.append(f"  {failing[0].id}: " + message.replace("\n", "\n    "))
    if len(failing) > 1:
        others = ", ".join(c.id for c in failing[1:])
        lines.append(
            f"  Also failing: {others} ({shown_command('check', name, *where)} shows each)."
        )
    return "\n".join(lines)
