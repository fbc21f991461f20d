"""`grader check`: run the checks on a submission, print the report, write --json, remember the verdict."""

import json
from pathlib import Path

from grader.check.runner import run_checks


def check(
    exercises: tuple[str, ...] = (),
    submission: Path | None = None,
    solutions: bool = False,
    json_file: Path | None = None,
) -> int:
    """`grader check`: run the checks, print the report, write --json; exit 0, 1, or 2 if unreadable."""
    import click

    from grader.check.report import render
    from grader.sandbox.submission import SubmissionError, find_submission

    try:
        folder = find_submission(submission, solutions)
    except SubmissionError as error:
        click.echo(f"Cannot check: {error}", err=True)
        return 2
    from grader.check.cache import files_fingerprint, save_report

    fingerprint = files_fingerprint(folder)
    report = run_checks(folder, exercises or None)
    click.echo(render(report, folder, solutions=solutions))
    if json_file is not None:
        try:
            Path(json_file).write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
        except OSError as error:
            click.echo(f"Cannot write {json_file}: {error.strerror}.", err=True)
            return 2
    if not solutions:
        save_report(folder, report, fingerprint)
    return 0 if report.passed else 1
