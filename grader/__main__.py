"""`python -m grader` and the `grader` command: the command line (grader.cli), then a quick exit (grader.finish)."""

from grader.cli import main
from grader.finish import finish


def run() -> None:
    """Run the command line, then end the process without the interpreter's teardown."""
    try:
        main()
    except SystemExit as done:
        finish(done.code)
    finish(0)


if __name__ == "__main__":
    run()
