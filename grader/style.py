"""Terminal conventions: colour only on a terminal and never with NO_COLOR; how to name a command; a list in a sentence."""

import contextlib
import os
import shutil
import sys
from contextvars import ContextVar
from pathlib import Path

import click

COLOURS = {
    "passed": "green",
    "failed": "red",
    "error": "red",
    "not_started": "yellow",
    "checking": "cyan",
}
MARKS = {"passed": "✓", "failed": "✗", "error": "!", "not_started": "·", "checking": "…"}
PLAIN_MARKS = {"passed": "+", "failed": "x", "error": "!", "not_started": "-", "checking": "~"}
# the program commands are named by, where not this process's
PROGRAM: ContextVar[str | None] = ContextVar("program", default=None)


def colour_on(stream=None) -> bool:
    """True when output goes to a terminal and NO_COLOR is unset or empty."""
    stream = stream or sys.stdout
    return not os.environ.get("NO_COLOR") and hasattr(stream, "isatty") and stream.isatty()


def paint(text: str, fg: str | None = None, bold: bool = False, dim: bool = False) -> str:
    """The text styled for a terminal, or unchanged when colour is off."""
    return click.style(text, fg=fg, bold=bold or None, dim=dim or None) if colour_on() else text


def mark(status: str) -> str:
    """A one-character sign for an exercise's status, coloured when colour is on."""
    sign = MARKS.get(status, "?")
    try:
        sign.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        sign = PLAIN_MARKS.get(status, "?")
    return paint(sign, fg=COLOURS.get(status), bold=True)


@contextlib.contextmanager
def commands_as(program: str):
    """Within it, commands are named as `program ARGS` (a report shown in a notebook names the student's own `grader`)."""
    token = PROGRAM.set(program)
    try:
        yield
    finally:
        PROGRAM.reset(token)


def command(*args: str) -> str:
    """How the student runs `grader ARGS` from here: `grader` when it is on PATH, else its path."""
    if named := PROGRAM.get():
        return " ".join((named, *args))
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    if script.name in ("grader", "grader.exe"):
        program = "grader" if shutil.which("grader") else _relative(script)
    elif sys.prefix != sys.base_prefix and not _on_path(Path(sys.executable).parent):
        program = f"{_relative(Path(sys.executable))} -m grader"
    else:
        program = f"{'python' if shutil.which('python') else 'python3'} -m grader"
    return " ".join((program, *args))


def _on_path(folder: Path) -> bool:
    """True when the folder is on PATH, as an activated virtual environment's is."""
    return any(
        Path(entry).absolute() == folder.absolute()
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry
    )


def _relative(path: Path) -> str:
    """The path relative to the working folder when it lies below it."""
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def shown_command(*args: str) -> str:
    """A command to type, set off from the text: bold on a terminal, else in backquotes."""
    text = command(*args)
    return paint(text, bold=True) if colour_on() else f"`{text}`"


def in_sentence(items: list[str]) -> str:
    """Items joined as in a sentence: "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
