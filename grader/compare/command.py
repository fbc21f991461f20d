"""`grader compare`: once every check passes, the 8-character MLP and the student's attention model side by side."""

import json
import os
import shutil
import signal
import time
from pathlib import Path

import click

from grader import kit, outlet
from grader.compare import view as compare_view
from grader.compare.corpus import check_reply
from grader.compare.events import NEEDED, checked
from grader.paths import DATA_DIR, GRADER_DIR
from grader.sandbox import launcher
from grader.sandbox.pipes import Deadline, FramedPipe, PipeFailed
from grader.sandbox.worker.codec import decode, encode
from grader.style import shown_command

STEPS = {"mlp": 1000, "attention": 400}  # the attention model starts from the trained MLP
SAMPLES = 100  # replies each model writes
TIME_LIMIT = 600.0  # seconds for the whole training job
# grader/compare's modules the job needs: no view, no plot
JOB_MODULES = ("__init__", "job", "models", "corpus")
# bytes of one event: a model's, with its replies and losses, is well under 1 MiB
EVENT_CAP = 16 << 20
TOO_SLOW = (
    "The training took longer than {limit:.0f} s and was stopped. Is your attention_head or attention_head_backward much slower "
    "than it needs to be (a Python loop over positions)? Vectorise it with matrix products."
)
OUTPUT_TAIL = 2000  # characters of the student's printed output shown when the job fails
# glibc's malloc keeps 64 MiB free at the heap's top instead of handing it back after each step's arrays
# and faulting it in again on the next: that churn was a third of the training's time (other OSes ignore it)
HEAP_PAD = {"MALLOC_TOP_PAD_": str(64 << 20)}


class JobFailed(Exception):
    """The training job stopped without its figures; the message says why, for the student."""


def compare(
    submission=None,
    solutions=False,
    seed=0,
    json_file=None,
    plot_file=None,
    no_mask=False,
    steps=None,
    samples=SAMPLES,
) -> int:
    """Gate on the checks, train both models in a worker, and report them beside the lesson's figures.

    steps ({"mlp": n, "attention": n}) and samples shorten a run, for the kit's own tests.
    """
    from grader.compare import plot

    if plot_file is not None and not plot.can_plot():  # said before the training, not after it
        click.echo(
            f"{plot.no_matplotlib()} Nothing was trained; leave out --plot to compare without the picture.",
            err=True,
        )
        return 2
    folder, status = gate(submission, solutions)
    if folder is None:
        return status
    started = time.monotonic()
    spec = {"seed": seed, "steps": steps or STEPS, "samples": samples, "no_mask": no_mask}
    models, notices, status = train_both(
        folder, spec, compare_view.REFERENCE_LABELS if solutions else compare_view.LABELS
    )
    if models is None:
        return status
    result = summary(seed, time.monotonic() - started, models, no_mask)
    result["functions"] = "reference" if solutions else "submission"
    click.echo("\n\n".join([compare_view.report(result, models), *notices]))
    if json_file is not None:
        Path(json_file).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if plot_file is not None:
        plot.draw(plot_file, result, models)
        click.echo(f"Drew the figures to {plot_file}.")
    return 0


def gate(submission, solutions: bool) -> tuple[Path | None, int]:
    """(the folder, 0) when the comparison may run, else (None, exit status) after saying why."""
    from grader.check.report import submission_args
    from grader.sandbox.submission import SubmissionError, find_submission

    try:
        folder = find_submission(submission, solutions)
    except SubmissionError as error:
        click.echo(f"Cannot run the comparison: {error}", err=True)
        return None, 2
    left = [] if solutions else unfinished(folder)
    if left:
        click.echo(compare_view.locked(left, submission_args(folder, False)))
        return None, 1
    return folder, 0


def train_both(
    folder: Path, spec: dict, names: dict = compare_view.LABELS
) -> tuple[dict | None, list, int]:
    """(models, notices, 0) from the training job, or (None, [], exit status) after saying why there are none."""
    progress, notices = compare_view.Progress(names=names, said=training_words(spec["steps"])), []
    try:
        models = run_job(folder, spec, progress.update, notices)
    except KeyboardInterrupt:
        progress.close()
        click.echo(
            "Stopped: the training was interrupted, so there are no figures this time.", err=True
        )
        return None, [], 130
    except JobFailed as failure:
        progress.close()
        click.echo(str(failure), err=True)
        return None, [], 1
    progress.close()
    return models, notices, 0


def training_words(steps: dict) -> str:
    """What the training does and, for the full run, how long it takes (bench/RESULTS.md: 6.5-7.5 s idle on 2 cores, 18-24 s at load 5)."""
    took = (
        "; this takes about 7 s on an idle machine, 20 s or more on a busy one"
        if steps == STEPS
        else ""
    )
    return f"Training the models: {steps['mlp']} steps of the MLP, then {steps['attention']} with attention{took}..."


def unfinished(folder: Path) -> list:
    """The exercises of the submission that do not pass, checked afresh: a verdict file edited by hand unlocks nothing.

    In the student's own exercises/ the verdict is kept, with each failing input for `grader try`, as `grader check` keeps it.
    """
    from grader.sandbox.isolation import choose_soon

    choose_soon()  # the confinement's probe runs while the checks are imported
    from grader.check.runner import run_checks
    from grader.check.state import State

    click.echo("Checking your five exercises before training (a few seconds)…")
    report = run_checks(folder)
    if launcher.own_exercises(folder):  # another's folder (a submission) is read, never written
        State(folder).save(report, by="compare")
    return [exercise for exercise in report.exercises if exercise.status != "passed"]


def summary(seed: int, seconds: float, models: dict, no_mask: bool) -> dict:
    """The comparison's figures as compare.schema.json fixes them, with a few more keys."""
    out = {"seed": seed, "seconds": round(seconds, 1), "models": {}}
    for name, event in models.items():
        probs, replies, losses = event["decision_probs"], event["replies"], event["losses"]
        out["models"][name] = {
            "p_decision": round(sum(probs) / len(probs), 4),
            "correct_replies": sum(check_reply(r).correct for r in replies),
            "sampled_replies": len(replies),
            "steps": len(losses),
            "final_loss": round(sum(losses[-50:]) / len(losses[-50:]), 4),
            "train_seconds": round(event["train_seconds"], 1),
        }
    out["update"] = "adam direction through the student's sgd_step, cosine schedule"
    out["mask"] = "attention_no_mask" not in models
    return out


def run_job(folder: Path, spec: dict, on_progress, notices: list | None = None) -> dict:
    """Run the training job of `spec` in a worker process; each model's event, by name; what it noted, in notices."""
    job = TrainingJob(folder, spec)
    models = {}
    try:
        for event in job.events(TIME_LIMIT):
            if event["event"] in ("progress", "status"):
                on_progress(event)
            elif event["event"] == "model":
                on_progress(event)
                models[event["model"]] = event
            elif event["event"] == "notice" and notices is not None:
                notices.append(event["text"])
            elif event["event"] == "error":
                raise JobFailed(failure_message(event, job))
            elif event["event"] == "done":
                missing = [name for name in NEEDED if name not in models] or [
                    m for m in ["attention_map"] if m not in models["attention"]
                ]
                if missing:
                    raise JobFailed(
                        unreadable(f"it finished without its {missing[0]} figures", job)
                    )
                if notices is not None and (
                    told := job.tail()
                ):  # print() in the student's functions, while training
                    notices.append(told.strip())
                return models
        raise JobFailed(f"The training stopped without its figures: {job.death()}{job.tail()}")
    finally:
        job.stop()


def unreadable(what: str, job: "TrainingJob") -> str:
    """The student's words for a job whose pipe carried what the job never sends: its own code wrote there."""
    return (
        f"The training stopped: the grader could not take what its job sent ({what}). The job's pipe carries only its own "
        f"events, so your code wrote to a file descriptor it did not open: print, or write to stdout, instead.{job.tail()}"
    )


def failure_message(event: dict, job: "TrainingJob") -> str:
    """What went wrong in the job, for the student."""
    where = (
        f" while training the {event['model'].replace('_', ' ')} model"
        if event.get("model")
        else ""
    )
    if event["kind"] == "diverged":
        then = (
            ""
            if kit.is_student_kit()
            else f": see whether {shown_command('compare', '--solutions')} trains on this machine"
        )
        return f"The training diverged{where}: {event['message']}. Your functions passed every check, so this is rare{then}.{job.tail()}"
    return f"The comparison stopped{where}: {event['message']}{job.tail()}"


class TrainingJob:
    """The training job's process, started as a worker is: through the worker's boot, from a private room (a copy of
    the five files, the worker's code and the comparison's, no reference), confined as strongly as the machine allows,
    ended as its confinement ends a worker.

    It is sent the job as a frame and sends its events as frames on a pipe of its own (grader.sandbox.pipes); what
    the student's code prints goes to its stderr, kept by the launcher for the tail, and is only ever shown as text.
    """

    def __init__(self, folder: Path, spec: dict):
        from grader.sandbox.isolation import IsolationError, choose

        try:
            self.confinement = choose()
        except IsolationError as error:
            raise JobFailed(f"The comparison cannot run its training here: {error}") from None
        self.launch = self.confinement.prepare(
            job_room(folder, self.confinement.owner()), "grader.compare.job"
        )
        self.started = time.time()
        popen = {
            k: v
            for k, v in self.launch.popen.items()
            if k not in ("start_new_session", "creationflags")
        }
        env = {**self.launch.env, **HEAP_PAD}
        self.child = launcher.Child(
            self.launch.argv, env=env, cwd=self.launch.cwd, output="events", feed=True, **popen
        )
        self.process = self.child.process
        self.pipe = FramedPipe(self.process, EVENT_CAP, "compare-job")
        self.pipe.send(
            encode({**spec, "submission": self.launch.folder, "parent": self.launch.parent})
        )

    def events(self, limit: float):
        """The job's events as they arrive, each checked (grader.compare.events), until it ends; JobFailed past the time limit."""
        deadline = Deadline(limit)
        while True:
            try:
                frame = self.pipe.receive(deadline)
            except PipeFailed as failed:
                if failed.kind == "timeout":
                    raise JobFailed(TOO_SLOW.format(limit=limit)) from None
                if failed.kind == "too_big":
                    raise JobFailed(unreadable(f"a frame of {failed.size} bytes", self)) from None
                return
            try:
                event = checked(decode(frame))
            except ValueError as error:
                raise JobFailed(unreadable(str(error), self)) from None
            if event["event"] == "started":
                if self.confinement.name.endswith("landlock") and not event["landlocked"]:
                    raise JobFailed(
                        "The comparison cannot run its training here: Landlock could not be applied to its process."
                    )
                continue
            yield event

    def stop(self):
        """End the job and everything it started, as its confinement ends a worker; remove its room."""
        self.pipe.close()
        try:
            self.confinement.end(self)
        finally:
            self.child.close()
            self.launch.room.remove()

    def death(self) -> str:
        """How the process ended, in words."""
        code = self.launch.status(self.process.wait())
        if code < 0:
            name = (
                signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
            )
            return (
                f"the Python process was killed by {name} (out of memory or a crash in your code)."
            )
        return f"the Python process exited with status {code} (does your code call sys.exit or os._exit?)."

    def tail(self) -> str:
        """The end of what the student's code printed, if anything."""
        text = outlet.terminal(self.child.output(OUTPUT_TAIL).strip(), "\n\t")
        return f"\nYour code printed (the end):\n{text}" if text else ""


def job_room(folder: Path, owner: int | None):
    """A worker's room for the job: the five files, the worker's code, and the comparison's code and corpus beside it."""
    from grader.sandbox.private import Room

    room = Room(folder, owner)
    package = room.kit / "grader" / "compare"
    package.mkdir(mode=0o755)
    for name in JOB_MODULES:
        shutil.copyfile(GRADER_DIR / "compare" / f"{name}.py", package / f"{name}.py")
    shutil.copyfile(GRADER_DIR / "paths.py", room.kit / "grader" / "paths.py")
    data = room.kit / "grader" / "data"  # where the copy of grader/paths.py looks first
    data.mkdir(mode=0o755)
    for split in ("train", "valid"):
        shutil.copyfile(DATA_DIR / f"{split}.txt", data / f"{split}.txt")
    for path in [*package.iterdir(), *data.iterdir(), room.kit / "grader" / "paths.py"]:
        os.chmod(path, 0o644)
    return room
