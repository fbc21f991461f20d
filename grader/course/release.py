"""`grader release OUT_DIR`: the student's kit for a course, a folder that pip installs, with no reference in it.

It holds the five stubs, the grader with its public checks only, the corpus, a README for students
(its set-up line, then docs/students.md) and a pyproject.toml. solutions/, the hidden checks
(grader/check/checks/hidden/), the known mistakes (grader/check/diagnosis.py) and the instructor's
commands stay behind; of grader/course/ only nbgrader/cells.py goes (with errors.py), which the
notebook's cells run on the student's side. The worked examples' inputs and expected outputs are
computed here from the reference and stored in examples.npz, so the student's kit checks the same
values as the full kit without the code that made them. No file of the kit may hold a statement of
the reference, whatever the file is named or its names are.
"""

import ast
import json
import shutil
import tomllib
from pathlib import Path

import click

import grader
from grader.check.checks import examples
from grader.course.errors import ReleaseError
from grader.course.stubs import write_stubs
from grader.paths import DATA_DIR, GRADER_DIR, KIT_ROOT, MODULES, SOLUTIONS_DIR

HERE = Path(__file__).resolve().parent
LEFT_OUT = ("check/checks/hidden", "check/diagnosis.py")  # under grader/: built from the reference
# grader/course/: only what the notebook's cells run at the student's side
COURSE_KEPT = {"__init__.py", "errors.py", "nbgrader/__init__.py", "nbgrader/cells.py"}
# what the release writes, and --force replaces
OWNED = ("README.md", "pyproject.toml", ".gitignore", "exercises", "grader")
# no module of the release imports these
FORBIDDEN = ("solutions", "grader.check.diagnosis", "grader.check.checks.hidden")
KIT_LINES = {
    'KIND = "full"': 'KIND = "student"',
    'DISTRIBUTION = "attention-by-hand"': 'DISTRIBUTION = "attention-by-hand-student"',
}
COURSE_INIT = '"""In the student\'s kit, only what the notebook\'s cells run for the student (nbgrader/cells.py); imports check, sandbox."""\n'
NBGRADER_INIT = '"""In the student\'s kit, only cells.py: what the notebook\'s cells run for the student; imports course, sandbox."""\n'
FIRST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/grader"
# the one source of the student guide: the release's README holds it below its set-up line
GUIDE = KIT_ROOT / "docs" / "students.md"


def release(out_dir: Path, force: bool = False) -> int:
    """Write the student's kit into out_dir and say what it holds; 0, or 2 when refused, 1 when it would leak."""
    out = Path(out_dir).expanduser()
    try:
        refuse(out, force)
        counts = write_kit(out)
    except ReleaseError as error:
        click.echo(f"Cannot release: {error}", err=True)
        return 2
    try:
        verify(out)
    except ReleaseError as error:
        click.echo(f"Released, but do not hand it out: {error}", err=True)
        return 1
    click.echo(summary(out, counts))
    return 0


def refuse(out: Path, force: bool) -> None:
    """Raise ReleaseError for a folder the release must not be written to."""
    if out.exists() and not out.is_dir():
        raise ReleaseError(
            f"{out} is a file: give the folder to write the student's kit to (a new or empty one)."
        )
    resolved = out.resolve()
    if resolved == KIT_ROOT or KIT_ROOT in resolved.parents:
        raise ReleaseError(
            f"{out} is inside the kit itself ({KIT_ROOT}): write the student's kit outside it, e.g. ../student-kit."
        )
    if out.is_dir() and any(out.iterdir()) and not force:
        raise ReleaseError(
            f"{out} is not empty. Choose a new or empty folder, or add --force to replace the release's own files "
            f"there ({', '.join(OWNED)}) and leave anything else as it is."
        )


def grader_files() -> list[Path]:
    """The grader's files that go into the student's kit, relative to grader/."""
    kept = []
    for path in sorted(GRADER_DIR.rglob("*")):
        relative = path.relative_to(GRADER_DIR)
        if path.is_dir() or "__pycache__" in relative.parts or path.suffix in (".pyc", ".npz"):
            continue
        if any(
            part.startswith(".") for part in relative.parts
        ):  # a tool's leftovers (.hypothesis/ of a test run)
            continue
        if (
            relative.parts[0] == "course"
            and relative.as_posix().removeprefix("course/") not in COURSE_KEPT
        ):
            continue
        name = relative.as_posix()
        if relative.parts[0] == "data" or any(
            name == gone or name.startswith(gone + "/") for gone in LEFT_OUT
        ):
            continue
        kept.append(relative)
    return kept


def write_kit(out: Path) -> dict:
    """Write every file of the student's kit; how many of each kind."""
    # before anything is written: it raises when the guide is missing
    readme = fill(HERE / "release_README.md")
    out.mkdir(parents=True, exist_ok=True)
    for name in OWNED:
        target = out / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
    package = out / "grader"
    files = grader_files()
    for relative in files:
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(GRADER_DIR / relative, package / relative)
    (package / "kit.py").write_text(student_kit_module(), encoding="utf-8")
    (package / "course" / "__init__.py").write_text(COURSE_INIT, encoding="utf-8")
    (package / "course" / "nbgrader" / "__init__.py").write_text(NBGRADER_INIT, encoding="utf-8")
    shutil.copytree(DATA_DIR, package / "data", ignore=shutil.ignore_patterns("__pycache__"))
    stored = examples.write(
        package / "check" / "checks" / examples.STORED.name, examples.from_reference
    )
    # made from the reference: the release is pristine whatever exercises/ holds
    write_stubs(out / "exercises")
    (out / "README.md").write_text(readme, encoding="utf-8")
    (out / "pyproject.toml").write_text(fill(HERE / "release_pyproject.toml"), encoding="utf-8")
    (out / ".gitignore").write_text(
        ".venv/\n__pycache__/\n*.egg-info/\nbuild/\n.grader/\n.hypothesis/\n", encoding="utf-8"
    )
    return {
        "grader": len(files),
        "examples": stored,
        "corpus": len(list((package / "data").iterdir())),
    }


def student_kit_module() -> str:
    """grader/kit.py as the student's kit has it: KIND = "student"."""
    text = (GRADER_DIR / "kit.py").read_text(encoding="utf-8")
    for full, student in KIT_LINES.items():
        if full not in text:
            raise ReleaseError(
                f"grader/kit.py has no line {full!r} to turn into {student!r}; the kit's release code needs updating."
            )
        text = text.replace(full, student)
    return text


def fill(template: Path) -> str:
    """A template of the release with the kit's version, dependencies, set-up line and student guide in place."""
    project = tomllib.loads((KIT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dependencies = "".join(
        f"    {json.dumps(dependency)},\n" for dependency in project["dependencies"]
    )
    values = {
        "version": grader.__version__,
        "dependencies": dependencies,
        "first_command": FIRST_COMMAND,
        "guide": student_guide(),
    }
    text = template.read_text(encoding="utf-8")
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def student_guide() -> str:
    """docs/students.md without its title line: the release's README has a title of its own."""
    try:
        text = GUIDE.read_text(encoding="utf-8")
    except OSError as error:
        raise ReleaseError(
            f"cannot read the student guide {GUIDE} ({error.strerror}): release from a full copy of the kit's repository."
        ) from None
    title, _, guide = text.partition("\n")
    if not title.startswith("# "):
        raise ReleaseError(
            f"{GUIDE} should start with its title (a line `# ...`); it starts with {title!r}."
        )
    return guide.strip()


def imported(path: Path, root: Path) -> set[str]:
    """Every module a Python file under root imports, by absolute name (relative imports resolved)."""
    names = set()
    package = ".".join(path.relative_to(root).parent.parts)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


NUMPY = {"np", "numpy"}


def from_numpy(node: ast.expr) -> bool:
    """Whether an expression is a name reached from numpy (np.max, np.linalg.norm)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in NUMPY


def shape_of(node: ast.expr) -> str:
    """An expression with its own names abstracted (every name, subscript and attribute not of numpy is _), so renaming hides nothing."""
    if isinstance(node, ast.Attribute) and from_numpy(node):
        return ast.unparse(node)
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        return "_"
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.Call):
        arguments = [shape_of(a) for a in node.args] + [
            f"{k.arg}={shape_of(k.value)}" for k in node.keywords
        ]
        return f"{shape_of(node.func)}({', '.join(arguments)})"
    if isinstance(node, ast.Tuple | ast.List):
        items = [shape_of(e) for e in node.elts]
        return "_" if set(items) <= {"_"} else f"({', '.join(items)})"
    if isinstance(node, ast.BinOp):
        return f"({shape_of(node.left)} {type(node.op).__name__} {shape_of(node.right)})"
    if isinstance(node, ast.UnaryOp):
        return f"{type(node.op).__name__} {shape_of(node.operand)}"
    return type(node).__name__


def telling(node: ast.expr) -> bool:
    """Whether an expression says enough of an answer to give it away: numpy calls nested, or one with two keywords."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call) and from_numpy(n.func)]
    return len(calls) >= 2 or any(len(call.keywords) >= 2 for call in calls)


def reference_statements(solutions: Path = SOLUTIONS_DIR) -> dict[str, str]:
    """The telling expressions of the reference's statements, by shape: which module, function and statement each is."""
    found: dict[str, str] = {}
    for path in sorted(solutions.glob("*.py")):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, ast.FunctionDef):
                continue
            for statement in ast.walk(function):
                value = (
                    getattr(statement, "value", None) if isinstance(statement, ast.stmt) else None
                )
                for node in ast.walk(value) if isinstance(value, ast.expr) else ():
                    if isinstance(node, ast.expr) and telling(node):
                        found.setdefault(
                            shape_of(node),
                            f"{path.stem}.{function.name}'s `{ast.unparse(statement)[:80]}`",
                        )
    return found


def holds_reference(path: Path, statements: dict[str, str]) -> list[str]:
    """What of the reference a Python file holds, whatever it is named: each expression shaped like a reference statement's."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []  # not Python the kit runs; the import check below says nothing of it either
    held = {
        f"line {node.lineno} holds {ast.unparse(node)[:60]!r}, as {statements[shape_of(node)]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.expr) and telling(node) and shape_of(node) in statements
    }
    return sorted(held)


def verify(out: Path) -> None:
    """Raise ReleaseError when a file of the release imports the reference, the known mistakes or a hidden check, or holds a reference statement."""
    leaks = []
    statements = reference_statements()
    for path in sorted(out.rglob("*.py")):
        found = [
            name
            for name in imported(path, out)
            if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN)
        ]
        leaks += [f"{path.relative_to(out)} imports {name}" for name in sorted(found)]
        if (
            out / "exercises"
        ) not in path.parents:  # the stubs are made from the reference's signatures and docstrings
            leaks += [
                f"{path.relative_to(out)} {what}" for what in holds_reference(path, statements)
            ]
    present = [
        gone
        for gone in ("solutions", "grader/check/diagnosis.py", "grader/check/checks/hidden")
        if (out / gone).exists()
    ]
    if leaks or present:
        raise ReleaseError(
            "the student's kit would reach the reference: "
            + "; ".join(leaks + [f"{p} is in it" for p in present])
            + f". Nothing in {out} is safe to hand out: remove it, make that module work without the reference, and release again."
        )


def summary(out: Path, counts: dict) -> str:
    """What was written, how to hand it out, and the student's first command."""
    return "\n".join(
        [
            f"Wrote the student's kit to {out}:",
            f"  exercises/        the {len(MODULES)} stubs",
            f"  grader/           {counts['grader']} files of the grader: the public checks, no reference, no hidden check",
            f"  grader/check/checks/examples.npz  {counts['examples']} arrays of worked examples, made now from the reference",
            f"  grader/data/      the replies corpus ({counts['corpus']} files)",
            "  README.md, pyproject.toml, .gitignore",
            "Hand out the folder as it is (a zip, a repository, nbgrader's release), or build a wheel for a JupyterHub image:",
            f"  pip wheel --no-deps {out} -w dist/",
            "A student's first command, in the folder:",
            f"  {FIRST_COMMAND}",
        ]
    )
