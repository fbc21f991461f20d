"""The rooms of grader/: imports flow downward only (cli → student / compare / course → check → sandbox → basics), no circle."""

import ast
import functools
import re
import sys
from pathlib import Path

import pytest

import grader

GRADER = Path(grader.__file__).resolve().parent
# A room's floor: a module may import its own room and any room on a lower floor, never a higher or a sideways one.
FLOORS = {"cli": 4, "student": 3, "compare": 3, "course": 3, "check": 2, "sandbox": 1}
BASICS = 0  # exercises, paths, style, __init__: what every room shares


def room(module: str) -> str:
    """The room of a dotted module name under grader: its first part after grader."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "__init__"
    return "cli" if name == "__main__" else name


def floor(name: str) -> int:
    return FLOORS.get(name, BASICS)


def module_name(path: Path) -> str:
    """grader/check/runner.py -> grader.check.runner."""
    relative = path.relative_to(GRADER.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


@functools.cache
def tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for the tests that read it."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imports(path: Path) -> set[str]:
    """Every grader module this file imports, at any depth in the file (imports inside functions count)."""
    found = set()
    package = (
        module_name(path).rpartition(".")[0] if path.name != "__init__.py" else module_name(path)
    )
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1]
                    + ([base] if base else [])
                )
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name in all_modules() and name != module_name(path)}


@functools.cache
def all_modules() -> frozenset[str]:
    """Every module under grader/, by its dotted name."""
    return frozenset(module_name(p) for p in GRADER.rglob("*.py"))


@functools.cache
def graph() -> dict[str, set[str]]:
    """Each module's imports of other grader modules (parsed once for the tests that read it)."""
    return {module_name(path): imports(path) for path in sorted(GRADER.rglob("*.py"))}


def test_every_import_goes_down_or_stays_in_its_room():
    wrong = []
    for module, targets in graph().items():
        for target in targets:
            here, there = room(module), room(target)
            if here != there and floor(there) >= floor(here) and target != "grader":
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_no_import_circle():
    edges = graph()
    circles = []

    def visit(node, path):
        for nxt in edges.get(node, ()):
            if nxt in path:
                circles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in done:
                visit(nxt, path + [nxt])
        done.add(node)

    done: set[str] = set()
    for start in edges:
        if start not in done:
            visit(start, [start])
    assert circles == []


def test_every_room_says_what_it_holds():
    for package in [p for p in GRADER.iterdir() if (p / "__init__.py").is_file()]:
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "\n" not in doc.strip(), package.name


WORKER = GRADER / "sandbox" / "worker"  # what runs in the worker, copied whole into its room
WORKER_PACKAGE = "grader.sandbox.worker"
WORKER_MAY_IMPORT = frozenset({"numpy", *sys.stdlib_module_names})


def outside_imports(source: str, here: str = WORKER_PACKAGE) -> list[str]:
    """The imports of a module of the package `here` that reach outside the worker: any but the standard library, numpy and its own."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            # the package, climbed level - 1 times
            base = here.split(".")[: len(here.split(".")) - node.level + 1]
            names = [".".join([*base, node.module] if node.module else base)]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        inside = [
            name == WORKER_PACKAGE
            or name.startswith(WORKER_PACKAGE + ".")
            or name.partition(".")[0] in WORKER_MAY_IMPORT
            for name in names
        ]
        found += [f"line {node.lineno}: {name}" for name, ok in zip(names, inside) if not ok]
    return found


def test_the_worker_imports_nothing_outside_its_folder():
    """Its room holds grader/sandbox/worker/ alone: an import of anything else of the kit, or of a library, fails there."""
    outside = {}
    for path in sorted(WORKER.rglob("*.py")):
        here = (
            module_name(path)
            if path.name == "__init__.py"
            else module_name(path).rpartition(".")[0]
        )
        if found := outside_imports(path.read_text(encoding="utf-8"), here):
            outside[path.relative_to(WORKER).as_posix()] = found
    assert not outside, (
        f"grader/sandbox/worker/ runs in the worker's room, which holds nothing else of the kit: {outside}"
    )


@pytest.mark.parametrize(
    "source",
    [
        "from grader.sandbox.errors import StudentError",
        "from grader.sandbox import launcher",
        "import grader.paths",
        "from .. import errors",
        "from ..errors import StudentError",
        "def later():\n    import psutil",
        "from grader import kit",
    ],
)
def test_an_import_outside_the_worker_is_found(source):
    assert outside_imports(source), source


def test_imports_inside_the_worker_are_allowed():
    inside = "import json\nimport numpy as np\nfrom grader.sandbox.worker.codec import encode\nfrom . import frames\nfrom .codec import decode"
    assert outside_imports(inside) == []


# Names of sys.executable outside the sandbox that start nothing: a message that prints the interpreter's path.
SHOWN_ONLY = {
    "grader/cli.py": "the Python-version and not-installed messages, before the kit can be imported",
    "grader/style.py": "the command a student should type, when the venv's bin is not on PATH",
}


def starts(path: Path) -> list[str]:
    """What in this file could start a process: an import of subprocess or multiprocessing, a use of sys.executable or os.exec*/spawn*."""
    found = []
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            found += [
                f"line {node.lineno}: import {n}"
                for n in names
                if n.split(".")[0] in ("subprocess", "multiprocessing")
            ]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (
                (node.value.id, node.attr) == ("sys", "executable")
                or node.value.id == "os"
                and node.attr.startswith(("exec", "spawn", "posix_spawn", "fork"))
            ):
                found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_only_the_sandbox_starts_a_python():
    """Every child process goes through grader/sandbox/launcher.py: no other room imports subprocess or names sys.executable."""
    outside = {}
    for path in sorted(GRADER.rglob("*.py")):
        relative = path.relative_to(GRADER.parent).as_posix()
        if relative.startswith("grader/sandbox/"):
            continue
        found = [
            f for f in starts(path) if not (relative in SHOWN_ONLY and f.endswith("sys.executable"))
        ]
        if found:
            outside[relative] = found
    assert not outside, (
        f"start child processes through grader.sandbox.launcher, not here: {outside}"
    )


def test_the_launcher_is_where_the_sandbox_starts_processes():
    """One door: only grader/sandbox/launcher.py makes a process (Popen) or names the interpreter to start it."""
    makers = {}
    for path in sorted(GRADER.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "Popen(" in text or re.search(
            r"subprocess\.(run|call|check_call|check_output)\(\[sys\.executable", text
        ):
            makers[path.relative_to(GRADER).as_posix()] = True
    assert set(makers) == {"sandbox/launcher.py"}, makers
