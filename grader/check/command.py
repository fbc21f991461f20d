"""`grader check`: run the checks on a submission, print the report, write --json and --junit, remember the verdict."""

import json
from pathlib import Path


def check(
    exercises: tuple[str, ...] = (),
    submission: Path | None = None,
    solutions: bool = False,
    json_file: Path | None = None,
    junit_file: Path | None = None,
    output: bool = False,
) -> int:
    """`grader check`: run the checks, print the report, write --json and --junit; exit 0, 1, or 2 if unreadable."""
    import click

    from grader.check.junit import junit_xml
    from grader.check.report import render
    from grader.sandbox.isolation import IsolationError, choose_soon
    from grader.sandbox.submission import SubmissionError, find_submission

    try:
        folder = find_submission(submission, solutions)
    except SubmissionError as error:
        click.echo(f"Cannot check: {error}", err=True)
        return 2
    choose_soon()  # the confinement's probe (a worker's start) runs while the checks are imported, not before the first worker
    from grader.check.runner import check_snapshot
    from grader.check.state import State, fingerprints
    from grader.sandbox.launcher import own_exercises
    from grader.sandbox.private import NotRegular, Snapshot

    # the student's own exercises/, where the verdict is remembered; another's is read, never written
    own = own_exercises(folder)
    try:
        with Snapshot(folder) as snapshot:
            state = State(folder) if solutions else State.load(folder)
            # nothing saved: no fingerprint to take
            saved = state.fresh(fingerprints(snapshot.files)) if state.entries else {}
            report = check_snapshot(snapshot, exercises or None, saved=saved)
    except NotRegular as error:  # a module replaced by a link or a folder since it was found
        click.echo(f"Cannot check: In {folder}: {error}.", err=True)
        return 2
    except (
        IsolationError
    ) as error:  # the tier asked for (ATTENTION_BY_HAND_ISOLATION) cannot be had here
        click.echo(f"Cannot check: {error}", err=True)
        return 2
    if own and not solutions:
        state.save(report)
    click.echo(render(report, folder, solutions=solutions, output=output, own=own))
    if json_file is not None and not write(
        json_file, json.dumps(report.to_json(), indent=1) + "\n"
    ):
        return 2
    if junit_file is not None and not write(junit_file, junit_xml(report)):
        return 2
    return 0 if report.passed else 1


def write(path: Path, text: str) -> bool:
    """Write a result file; False, having said why and what to do, when it cannot be written."""
    import click

    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        click.echo(
            f"Cannot write {path}: {error.strerror}. Choose a file in a folder that exists and that you may write to.",
            err=True,
        )
        return False
    return True
