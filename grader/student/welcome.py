"""The first run: what the lesson builds, before the progress table says where to start."""

from pathlib import Path

import click

from grader.check.state import state_dir
from grader.style import paint

WELCOME = """\
Welcome to Attention by Hand, lesson 4 of 6 on the way to a small GPT.

You build self-attention by hand in numpy, then train it. The 8-character MLP of
lesson 3 guesses the character after "window, so " right half the time; your
attention model looks back over the whole reply and gets it right far more often
(0.86 in the lesson). Fill in the five modules below in order: each function's
docstring is its spec."""


def first_run(submission: Path) -> bool:
    """True when this submission has never been checked: it has no state folder yet."""
    return not state_dir(submission).exists()


def show_welcome() -> None:
    """Print the welcome, its first line bold."""
    title, rest = WELCOME.split("\n", 1)
    click.echo(paint(title, bold=True) + "\n" + rest + "\n")
