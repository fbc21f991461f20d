"""What student code may import: numpy, the standard library and its own sibling modules, the same rule everywhere.

The rule is judged by who imports, not by what is installed: an import made by the student's
modules (their globals' __name__ is in the private package) of anything else is refused with
Refused, a ModuleNotFoundError, whether or not that library exists here. numpy's and the
standard library's own imports, lazy ones included, are theirs and never judged.
"""

import builtins
import functools
import importlib
import sys

from grader.sandbox.worker.codec import PACKAGE

# Top-level modules student code may import: numpy, the standard library, and its own package (siblings).
ALLOWED = frozenset({"numpy", PACKAGE, *sys.stdlib_module_names})
RULE = "use numpy and the standard library only (and your other exercise modules); the grading machine has nothing else"


class Refused(ModuleNotFoundError):
    """An import student code may not make: of the reference solutions, or of a library the grader does not allow."""


def judge(name, level, space) -> None:
    """Raise Refused if the module whose globals are space may not import name (level > 0: a sibling, always allowed)."""
    importer = space.get("__name__") if type(space) is dict else None
    if (
        level
        or type(name) is not str
        or type(importer) is not str
        or importer.partition(".")[0] != PACKAGE
    ):
        return
    top = name.partition(".")[0]
    if top not in ALLOWED:
        raise Refused(
            f"{importer.rpartition('.')[2]}.py imports {top}, which the grader does not allow: {RULE}",
            name=name,
        )


def install() -> None:
    """From now on, judge each import student code makes: by statement, __import__ or importlib.import_module."""
    builtin_import, import_module = builtins.__import__, importlib.import_module

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        judge(name, level, sys._getframe(1).f_globals if globals is None else globals)
        return builtin_import(name, globals, locals, fromlist, level)

    def guarded_import_module(name, package=None):
        judge(name, type(name) is str and name.startswith("."), sys._getframe(1).f_globals)
        return import_module(name, package)

    builtins.__import__, importlib.import_module = guarded_import, guarded_import_module


def refused(error) -> Refused | None:
    """The Refused behind an exception (itself, its cause or its context), or None."""
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, Refused):
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


@functools.lru_cache(maxsize=64)
def siblings(source: bytes) -> frozenset[str] | None:
    """The sibling modules a module's source imports (`from .x import y`, `from . import (x as z)`); None if it does not parse.

    The one reading of a module's imports, by its syntax tree: guard.py's, the verdict cache's and
    the report's. Lazy import: the worker, which loads this module, never needs it. Kept per source:
    a run asks it of the same five files more than once.
    """
    import ast

    try:
        tree = ast.parse(source)
    except (
        SyntaxError,
        ValueError,
        RecursionError,
        MemoryError,
    ):  # RecursionError: an expression too deep to parse
        return None
    return frozenset(name for node in ast.walk(tree) for name in sibling_names(node))


def sibling_names(node) -> list[str]:
    """The sibling modules one syntax node imports: those of a `from . import` or `from .x import`, else none."""
    import ast

    if not (isinstance(node, ast.ImportFrom) and node.level == 1):
        return []
    names = [node.module] if node.module else [alias.name for alias in node.names]
    return [name.split(".")[0] for name in names]
