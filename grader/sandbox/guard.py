"""Refusing submissions that import the reference solutions."""

import ast
import hashlib
from pathlib import Path

from grader.paths import MODULES
from grader.sandbox.errors import NotRegular
from grader.sandbox.private import read_module
from grader.sandbox.worker.imports import sibling_names

TOO_DEEP = (
    "{name} is nested too deeply for Python to read (a very long expression or deeply nested brackets): "
    "the grader does not grade it. Split it into shorter statements."
)


KEPT = 8  # folders' refusals kept: a run's workers share one folder, read and parsed once


def refusals(folder: Path) -> dict[str, str]:
    """For each module the grader does not grade, why: it imports the reference solutions (directly or
    through a sibling), or it is too deep for Python's parser (that module only; its importers get the reference's).
    """
    files = {}
    for name in MODULES:
        try:
            files[f"{name}.py"] = read_module(folder, name)  # the one reader of a student's module
        except NotRegular:
            continue  # the worker reports it when the module is imported
    key = hashlib.sha256(
        repr(sorted((name, hashlib.sha256(data).digest()) for name, data in files.items())).encode()
    ).digest()
    if key not in _found:
        while len(_found) >= KEPT:
            _found.pop(next(iter(_found)))
        _found[key] = _refusals(files)
    return dict(_found[key])


_found: dict[bytes, dict[str, str]] = {}  # the digest of a folder's files -> its refusals


def _refusals(files: dict[str, bytes]) -> dict[str, str]:
    """refusals, from the files' names and contents."""
    direct, siblings, deep = {}, {}, {}
    for name, data in files.items():
        path = Path(name)
        try:
            tree = ast.parse(data, filename=path.name)
        except (SyntaxError, ValueError):
            continue  # the worker reports it when the module is imported
        except (RecursionError, MemoryError):
            deep[path.stem] = TOO_DEEP.format(name=path.name)
            continue
        siblings[path.stem] = set()
        for node in ast.walk(tree):
            line = _solutions_import(node)
            if line and path.stem not in direct:
                direct[path.stem] = f"{path.name} imports the reference solutions (line {line})"
            siblings[path.stem].update(sibling_names(node))
    found = {}
    for name in MODULES:
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            if current in direct:
                found[name] = (
                    f"{direct[current]}; the grader does not grade it. Write the functions yourself."
                )
                break
            todo.extend(siblings.get(current, ()))
    return {**found, **{name: why for name, why in deep.items() if name in MODULES}}


def _solutions_import(node) -> int | None:
    """The line of an import of `solutions` (statement, __import__ or importlib), else None."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module]
    elif isinstance(node, ast.Call):
        func = node.func
        called = (
            func.id
            if isinstance(func, ast.Name)
            else func.attr
            if isinstance(func, ast.Attribute)
            else ""
        )
        if (
            called in ("__import__", "import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names = [str(node.args[0].value)]
    return node.lineno if any(name.split(".")[0] == "solutions" for name in names) else None


def imports_of(folder: Path, module: str) -> set[str]:
    """The sibling modules a student module imports (`from .heads import ...`), read as the grader reads it; none when
    it cannot be read or parsed (the worker says why when it is imported)."""
    try:
        tree = ast.parse(read_module(folder, module), filename=f"{module}.py")
    except (NotRegular, SyntaxError, ValueError, RecursionError, MemoryError, OSError):
        return set()
    return {name for node in ast.walk(tree) for name in sibling_names(node)} & set(MODULES)
