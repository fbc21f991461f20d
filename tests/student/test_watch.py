"""`grader watch`: real saves to a real folder, a syntax error on the way, a slow check, and Ctrl-C."""

import io
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from busy import allowed

from grader.check.files import hashes_for, read_modules
from grader.check.results import STATUSES, CheckResult, ExerciseResult, Report
from grader.check.state import State, live_fingerprints
from grader.paths import KIT_ROOT, SOLUTIONS_DIR
from grader.student import jobs, watch
from grader.style import mark

WAIT = 90.0  # seconds for one verdict on a busy machine


class Session:
    """`grader watch` running in its own process, its output read line by line."""

    def __init__(self, *args, env: dict | None = None):
        env = dict(os.environ, NO_COLOR="1", **(env or {}))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader", "watch", *args],
            cwd=KIT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: str) -> re.Match:
        """The first line from now on matching the pattern; fails after WAIT seconds."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            match = re.search(pattern, line)
            if match:
                return match
        pytest.fail(f"no line matching {pattern!r} in:\n{''.join(self.seen)}")

    def quiet(self, seconds: float = 1.0) -> None:
        """Read on until nothing has been printed for that long."""
        while True:
            try:
                self.seen.append(self.lines.get(timeout=seconds))
            except queue.Empty:
                return

    def stop(self) -> str:
        """Ctrl-C, then the rest of the output."""
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=20)
        time.sleep(0.2)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def save(path, text):
    """Write a file as an editor would, making sure its modification time moves."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


@pytest.mark.slow
@pytest.mark.posix("stops grader watch with SIGINT, as Ctrl-C does")
def test_save_syntax_error_fix_and_ctrl_c(submission):
    session = Session("scores", "--submission", str(submission))
    try:
        session.wait_for(r"scores: not started")
        broken = "def attention_scores(q, k)\n    return q\n"
        save(submission / "scores.py", broken)
        session.wait_for(r"scores: cannot run.*")
        session.wait_for(r"cannot be imported")
        save(submission / "scores.py", (SOLUTIONS_DIR / "scores.py").read_text())
        session.wait_for(r"scores passes all \d+ checks")
        save(submission / "scores.py", broken)  # an undo brings back files already checked once
        session.wait_for(r"scores: cannot run.*")
        output = session.stop()
    finally:
        session.kill()
    assert session.proc.returncode == 0
    assert output.rstrip().endswith("shows it.")
    assert "Stopped watching" in output
    assert "Traceback" not in output
    assert re.search(r"\d+\.\d s after your save", output)


@pytest.mark.slow
@pytest.mark.posix("stops grader watch with SIGINT, as Ctrl-C does")
def test_without_an_exercise_it_follows_the_file_saved(submission):
    session = Session("--submission", str(submission))
    try:
        session.wait_for(r"scores: not started")
        save(submission / "softmax.py", (SOLUTIONS_DIR / "softmax.py").read_text())
        session.wait_for(r"softmax passes all \d+ checks")
        session.wait_for(r"Next: fill in attention_scores\(\)")
    finally:
        session.stop()
        session.kill()


@pytest.mark.slow
@pytest.mark.posix("stops grader watch with SIGINT, as Ctrl-C does")
def test_a_slow_check_shows_that_it_is_checking_until_its_verdict_lands(submission):
    reference = (SOLUTIONS_DIR / "scores.py").read_text()
    save(submission / "scores.py", reference)
    session = Session("scores", "--submission", str(submission))
    try:
        session.wait_for(r"scores passes all \d+ checks")
        # every exercise has its verdict: nothing more to check
        session.wait_for(r"^[^?…~]* training {4}")
        session.quiet()
        before = len(session.seen)
        save(
            submission / "scores.py",
            "import time\ntime.sleep(2)\n" + reference.replace(" / math.sqrt(d)", ""),
        )
        session.wait_for(r"scores: checking \(started \d+ s ago\)")
        checking = time.monotonic()
        session.wait_for(r"scores: failing")
        assert time.monotonic() - checking > 1.5  # the import alone sleeps 2 s
    finally:
        session.stop()
        session.kill()
    first, *_ = "".join(session.seen[before:]).split("-" * 60 + "\n")[1:]
    assert re.search(r"[…~] scores  ", first) and "scores: checking" in first
    assert "passes all" not in first  # the old verdict


def run_python(code: str):
    """A recheck command that runs this code instead of the checks, given the folder as argv[1]."""
    return lambda folder, names: [sys.executable, "-c", code, str(folder), *names]


def test_a_save_during_a_check_cuts_it_short(submission, monkeypatch):
    slow_check = "import sys, time, pathlib; (pathlib.Path(sys.argv[1]) / 'masking.py').write_text('# saved while the check ran\\n'); time.sleep(60)"
    monkeypatch.setattr(jobs, "recheck_command", run_python(slow_check))
    watcher = watch.Watcher(submission, None)
    started = time.monotonic()
    try:
        assert watcher.check("scores") == ["masking"]
        assert time.monotonic() - started < allowed(10)
    finally:
        watcher.close()  # the job made ready for the next save runs the same slow check: not left for a minute


def test_a_check_of_another_exercise_leaves_the_ready_job_for_the_next_save(
    submission, monkeypatch
):
    """heads rechecked because scores changed runs in a job of its own: a save that cuts it finds the ready job still ready."""

    class Recheck:
        failure = ""

        def __init__(self, folder, names):
            self.told = names

        def go(self, names):
            self.told = names
            return self

        def running(self):
            return self.told is None  # ready until told what to check, then done at once

        def stop(self):
            pass

    monkeypatch.setattr(watch, "Recheck", Recheck)
    monkeypatch.setattr(watch.Watcher, "show", lambda self: None)
    watcher = watch.Watcher(submission, "scores")
    ready = watcher.ready = Recheck(submission, None)
    watcher.check("heads")
    assert watcher.ready is ready and ready.told is None
    watcher.check("scores")
    assert ready.told == ["scores"] and watcher.ready is not ready and watcher.ready.told is None


class DoneJob:
    """A job that has saved its verdict as soon as it is told what to check; go() may do what else happens meanwhile."""

    failure = ""
    meanwhile = staticmethod(lambda: None)

    def __init__(self, folder, names):
        self.told = names

    def go(self, names):
        self.told = names
        self.meanwhile()
        return self

    def running(self):
        return self.told is None

    def stop(self):
        pass


def test_the_first_screen_of_a_check_says_checking_even_when_the_verdict_is_saved_before_it_is_drawn(
    submission, monkeypatch
):
    """A quick check on a busy machine: its verdict is saved before the screen is drawn. The screen still says "checking" first
    (a save is always followed by that screen, then the verdict), and the verdict follows once the check is over."""
    passed = ExerciseResult("scores", "passed", 1.0, 1.0, [CheckResult("scores.one", "passed")])
    monkeypatch.setattr(watch, "Recheck", DoneJob)
    # the verdict is on the files as they are
    passed.files = hashes_for(read_modules(submission), "scores")
    State(submission).save(Report([passed], seed=0))
    screens = []
    monkeypatch.setattr(watch.Watcher, "show", lambda self: screens.append(self.compose()))
    watcher = watch.Watcher(submission, "scores")
    watcher.check("scores")
    assert "scores: checking (started" in screens[0] and "passes" not in screens[0].splitlines()[3]
    watcher.show()
    assert "scores passes all 1" in screens[-1]


def test_a_save_just_after_a_check_saved_its_verdict_does_not_mark_that_check_as_saving_nothing(
    submission, monkeypatch
):
    """Files saved again the moment a check's verdict is saved: the verdict is on the files before, so a save that brings
    them back finds the verdict kept, and one that does not gets them checked; they are never taken for a check that saved nothing."""

    class SavedThenEdited(DoneJob):
        meanwhile = staticmethod(lambda: save(submission / "training.py", "# saved again\n"))

    # and no verdict is saved of the files now on disk
    monkeypatch.setattr(watch, "Recheck", SavedThenEdited)
    monkeypatch.setattr(watch.Watcher, "show", lambda self: None)
    watcher = watch.Watcher(submission, "training")
    before = live_fingerprints(submission)["training"]
    assert watcher.check("training") == ["training"]
    assert ("training", before) not in watcher.tried
    assert "training" in watcher.to_check()


def test_a_fault_in_the_grader_is_reported_and_watching_goes_on(submission, monkeypatch, capsys):
    broken_check = "import sys; print('RuntimeError: the checks could not be loaded', file=sys.stderr); sys.exit(1)"
    monkeypatch.setattr(jobs, "recheck_command", run_python(broken_check))
    watcher = watch.Watcher(submission, None)
    try:
        assert watcher.check("scores") == []
        assert watcher.to_check() == ["masking", "softmax", "heads", "training"]  # not scores again
        assert "scores: checking" in capsys.readouterr().out
        watcher.show()
        out = capsys.readouterr().out
    finally:
        watcher.close()  # the job made ready for the next save, and its temporary folder
    assert "The grader could not check scores: RuntimeError: the checks could not be loaded" in out
    assert "watching goes on" in out
    assert "? scores: no verdict yet." in out and "scores: checking" not in out


@pytest.mark.slow
def test_on_a_terminal_the_clock_counts_the_seconds_of_a_check(submission, monkeypatch, capsys):
    monkeypatch.setattr(jobs, "recheck_command", run_python("import time; time.sleep(2.6)"))
    monkeypatch.setattr(watch, "colour_on", lambda: True)  # redraw in place, as on a terminal
    watcher = watch.Watcher(submission, "scores")
    try:
        assert watcher.check("scores") == []
    finally:
        watcher.close()
    out = capsys.readouterr().out
    assert f"{mark('checking')} scores  ? masking" in out
    seconds = [int(s) for s in re.findall(r"scores: checking \(started (\d+) s ago\)", out)]
    # redrawn once a second, and only then
    assert seconds == list(range(len(seconds))) and len(seconds) >= 3
    assert watcher.checking is None


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_the_legend_explains_every_mark_the_screen_can_show(
    submission, monkeypatch, capsys, encoding
):
    if encoding == "ascii":
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    # an exercise's verdict, its check running, no verdict yet
    statuses = {*STATUSES, "checking", "unknown"}
    assert set(watch.LEGEND) == statuses
    assert len({mark(status) for status in statuses}) == len(statuses)
    legend = watch.legend()
    for status in statuses:
        assert f"{mark(status)} {watch.LEGEND[status]}" in legend
    monkeypatch.undo()
    watch.Watcher(submission, None).show()
    out = capsys.readouterr().out
    assert out.count(watch.legend()) == 1
    # under the progress line
    assert out.splitlines()[3] == watch.legend() and "training" in out.splitlines()[2]


def test_a_failing_verdict_shows_the_first_check_in_full_and_names_the_rest():
    checks = [
        CheckResult("softmax.rows_sum_to_one", "failed", "each row should sum to 1\n  x = [[1.]]"),
        CheckResult("softmax.no_overflow", "failed", "softmax overflowed"),
        CheckResult("softmax.matches_reference", "passed"),
    ]
    text = watch.verdict("softmax", ExerciseResult("softmax", "failed", 5.0, 20.0, checks))
    assert "failing, 1 of 3 checks pass" in text
    assert "softmax.rows_sum_to_one: each row should sum to 1\n      x = [[1.]]" in text
    assert "Also failing: softmax.no_overflow" in text and "softmax overflowed" not in text


def test_the_counter_counts_only_verdicts_on_the_current_files(monkeypatch):
    """While softmax is being checked after a save, its old passing checks are not counted as passing."""
    from grader import kit
    from grader.check.results import Report

    monkeypatch.setattr(kit, "is_student_kit", lambda: True)
    passing = [CheckResult(f"{name}.one", "passed") for name in ("scores", "softmax")]
    for check in passing:
        check.public = True
    report = Report(
        [ExerciseResult(c.id.partition(".")[0], "passed", 1.0, 1.0, [c]) for c in passing], seed=0
    )
    fresh = {"scores": {}}  # softmax's files changed since its verdict
    line = watch.progress(report, fresh, checking="softmax")
    assert "1 of 1 public checks pass, 4 exercises still to check" in line, line
    assert "2 of 2" not in line


def test_of_files_saved_together_the_earliest_in_the_lesson_is_shown(submission, monkeypatch):
    """softmax and training saved at once: softmax, on which training builds, is the one shown and checked first."""
    monkeypatch.setattr(watch.Watcher, "show", lambda self: None)
    watcher = watch.Watcher(submission, None)
    watcher.after_save(["softmax", "training"])
    assert watcher.target == "softmax" and watcher.to_check()[0] == "softmax"


def test_a_passing_exercise_shows_the_note_of_an_earlier_one_failing():
    note = "training uses your softmax, which fails its public checks; here training runs with your own softmax, and passes: fix softmax first."
    result = ExerciseResult(
        "training", "passed", 30.0, 30.0, [CheckResult("training.one", "passed")], note=note
    )
    assert watch.verdict("training", result).splitlines()[1] == f"  {note}"


@pytest.mark.posix("sends itself SIGINT, as Ctrl-C does")
def test_ctrl_c_while_a_check_is_ended_stops_the_watch_once_it_is_ended(submission, monkeypatch):
    """Ctrl-C takes effect at the watch's next pause, never halfway through ending (or starting) a check's process:
    under load, a job's temporary folder was once left so."""
    made: list = []

    class Recheck:
        failure = ""

        def __init__(self, folder, names):
            self.told, self.stopped = names, False
            made.append(self)

        def go(self, names):
            self.told = names
            return self

        def running(self):
            return self.told is None

        def stop(self):
            if (
                self is made[0]
            ):  # the job that checked scores, ended once its verdict is saved: Ctrl-C halfway through
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.1)
            self.stopped = True

    monkeypatch.setattr(watch, "Recheck", Recheck)
    monkeypatch.setattr(watch.Watcher, "show", lambda self: None)
    shutil.copy(SOLUTIONS_DIR / "scores.py", submission / "scores.py")
    assert watch.watch("scores", submission) == 0
    assert len(made) >= 2 and all(job.stopped for job in made)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def ready_workers(scratch: Path) -> None:
    """Wait until the job kept ready has probed the confinement: its folder is the only job's, a worker's room was
    seen in it (the probe's worker), and that room is gone again. Seen rooms are remembered, as a probe's lasts a
    moment; which job it was matters to no assertion, only that the save usually meets a job that is ready."""
    deadline, probed = time.monotonic() + allowed(30), set()
    while True:
        now = rooms(scratch)
        probed.update(room.parent.name for room in now)
        jobs = {path.name for path in scratch.glob("grader-child-*")}
        if len(jobs) == 1 and jobs <= probed and not now:
            return
        assert time.monotonic() < deadline, (
            f"the job kept ready never probed the confinement: {jobs}, {probed}"
        )
        time.sleep(0.02)


def rooms(scratch: Path) -> list:
    """The workers' rooms in the temporary folder now (a folder removed while it is read is read again)."""
    while True:
        try:
            return list(scratch.glob("**/grader-worker-*"))
        except FileNotFoundError:
            continue


@pytest.mark.slow
@pytest.mark.posix("stops grader watch with SIGINT, as Ctrl-C does")
def test_the_checks_a_watch_ends_leave_no_folder_behind(submission):
    """Each save's check runs in a job the watch ends once the verdict is saved, while the job still stops its workers;
    the job kept ready is ended with the watch. Their snapshots and their workers' rooms go with them (4 to 9 folders
    were left in the temporary folder by these three saves before)."""
    # in the system's, which a worker's user may pass through
    scratch = Path(tempfile.mkdtemp(prefix="abh-watch-tmp-"))
    os.chmod(scratch, 0o711)
    stub, solved = (submission / "scores.py").read_text(), (SOLUTIONS_DIR / "scores.py").read_text()
    session = Session("scores", "--submission", str(submission), env={"TMPDIR": str(scratch)})
    try:
        session.wait_for(r"scores: not started")
        for text, verdict in (
            (solved, r"scores passes all"),
            (stub + "# saved again\n", r"scores: not started"),
            (solved, r"scores passes all"),
        ):
            ready_workers(scratch)
            save(submission / "scores.py", text)
            session.wait_for(verdict)
        ready_workers(scratch)
        session.stop()
        left = sorted(path.name for path in scratch.iterdir())
        inside = sorted(str(path.relative_to(scratch)) for path in scratch.glob("**/*"))[:40]
    finally:
        session.kill()
        shutil.rmtree(scratch, ignore_errors=True)
    assert session.proc.returncode == 0
    assert left == [], inside


@pytest.mark.slow
@pytest.mark.posix("sends grader watch the signals of a kill and of a closed terminal")
@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP"])
def test_a_watch_killed_or_whose_terminal_closes_ends_as_ctrl_c_ends_it(submission, stop):
    """A kill or a closed terminal ends the watch at its next pause, with its job kept ready and that job's folder
    (a SIGTERM left the ready job's folder in the temporary folder before)."""
    scratch = Path(tempfile.mkdtemp(prefix="abh-watch-tmp-"))
    os.chmod(scratch, 0o711)
    session = Session("scores", "--submission", str(submission), env={"TMPDIR": str(scratch)})
    try:
        session.wait_for(r"scores: not started")
        ready_workers(scratch)
        session.proc.send_signal(getattr(signal, stop))
        session.proc.wait(timeout=allowed(20))
        left = sorted(path.name for path in scratch.iterdir())
    finally:
        session.kill()
        shutil.rmtree(scratch, ignore_errors=True)
    assert (session.proc.returncode, left) == (0, [])


def test_the_recheck_runs_this_kits_code_not_the_one_installed(tmp_path):
    """A kit run from its folder (the student's, released) while another is installed: the recheck imports this one."""
    command = jobs.recheck_command(tmp_path, ["scores"])
    # first on its sys.path (launcher.KIT_MODULE)
    assert command[command.index("grader.student.recheck") - 1] == str(KIT_ROOT)


def test_a_job_is_done_once_its_verdict_is_saved_not_once_it_has_stopped_its_workers(
    monkeypatch, tmp_path
):
    """The job prints SAVED after saving the verdict, then stops its workers: the watch shows the verdict meanwhile."""
    lingering = f"print({jobs.SAVED!r}, flush=True); import time; time.sleep(60)"  # a job whose workers take long to stop
    monkeypatch.setattr(
        jobs, "recheck_command", lambda folder, names: [sys.executable, "-c", lingering]
    )
    job = jobs.Recheck(tmp_path, ["scores"])
    try:
        deadline = time.monotonic() + allowed(20)
        while job.running() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not job.running() and job.child.returncode is None and job.failure == ""
    finally:
        job.stop()
    assert job.child.returncode is not None


def test_no_root_cause_note_the_table_contradicts(tmp_path):
    """softmax fixed and passing, heads's verdict from before the fix still saying "fix softmax first": the screen drops that note."""
    note = "heads uses your softmax, which fails its public checks; here heads runs with your own softmax, so its failures may come from them: fix softmax first."
    known = {
        "scores": ExerciseResult(
            "scores", "passed", 15.0, 15.0, [CheckResult("scores.one", "passed")]
        ),
        "masking": ExerciseResult(
            "masking", "passed", 15.0, 15.0, [CheckResult("masking.one", "passed")]
        ),
        "softmax": ExerciseResult(
            "softmax", "passed", 20.0, 20.0, [CheckResult("softmax.one", "passed")]
        ),
        "heads": ExerciseResult(
            "heads",
            "failed",
            0.0,
            20.0,
            [CheckResult("heads.one", "failed", "wrong")],
            note=note,
            cause="softmax",
        ),
    }

    class Saved:  # heads's files changed with softmax's since its verdict: only the other three are fresh
        seed = 0

        def last(self):
            return known

        def fresh(self, prints):
            return {name: known[name] for name in ("scores", "masking", "softmax")}

    watcher = watch.Watcher.__new__(watch.Watcher)
    watcher.folder, watcher.target, watcher.where, watcher.prints, watcher.state = (
        tmp_path,
        "softmax",
        (),
        {},
        Saved(),
    )
    watcher.checking, watcher.started, watcher.faults = None, 0.0, {}
    screen = watcher.compose()
    assert f"{mark('passed')} softmax" in screen and "softmax passes" in screen
    assert "fix softmax first" not in screen and "fails its public checks" not in screen, screen
    assert "Fix it in" in screen and "heads.py" in screen  # the advice names heads itself
