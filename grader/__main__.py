"""`python -m grader`: the same program as the `grader` command."""

from grader.cli import main

main()
