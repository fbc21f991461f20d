"""Every first-order mutant of the reference: Cosmic Ray's operators and this domain's (operators.py), one change each.

A mutant is named by its module, operator and occurrence (the n-th place that operator applies in
the module, in Cosmic Ray's order or the syntax tree's); the same mutated source reached by two
operators counts once, under the first. Mutants that do not compile are left out (they cannot be a
student's working code), as are those equal to the reference.
"""

import ast
import difflib
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cosmic_ray.plugins
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from operators import OPERATORS, Source

from grader.exercises import NAMES
from grader.paths import SOLUTIONS_DIR

SKIPPED_CORE = {
    "core/VariableReplacer",  # replaces a variable by a random number: not the same mutant on every run
    "core/VariableInserter",  # the same
    "core/NoOp",
}


@dataclass(frozen=True)
class Mutant:
    """One changed module of the reference."""

    id: str  # module:operator:occurrence
    module: str
    function: str
    operator: str
    line: int  # the first line of the reference it changes
    source: str

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def diff(self) -> str:
        """The change, as a unified diff of the module with one line of context."""
        original = reference_source(self.module)
        lines = difflib.unified_diff(
            original.splitlines(), self.source.splitlines(), f"solutions/{self.module}.py", f"mutant/{self.module}.py", n=1, lineterm=""
        )
        return "\n".join(list(lines)[2:])


@cache
def reference_source(module: str) -> str:
    return (SOLUTIONS_DIR / f"{module}.py").read_text(encoding="utf-8")


def core_operators() -> list[str]:
    return [name for name in cosmic_ray.plugins.operator_names() if name not in SKIPPED_CORE]


def core_mutants(module: str, code: str) -> list[tuple[str, int, str]]:
    """(operator, occurrence, source) of Cosmic Ray's operators on a module."""
    found, nodes = [], list(ast_nodes(get_ast(code)))
    for name in core_operators():
        operator = cosmic_ray.plugins.get_operator(name)()
        places = sum(len(list(operator.mutation_positions(node))) for node in nodes)  # counted once: mutating parses anew
        found += [(name.removeprefix("core/"), n, mutate_code(code, operator, n)) for n in range(places)]
    return found


def domain_mutants(code: str) -> list[tuple[str, int, str]]:
    """(operator, occurrence, source) of this domain's operators on a module."""
    source = Source(code)
    return [(name, n, source.apply(edits)) for name, operator in OPERATORS.items() for n, edits in enumerate(operator(source))]


def first_changed_line(original: str, mutated: str) -> int:
    """The first line of the original that the mutant changes, or that added lines follow (1-based)."""
    matcher = difflib.SequenceMatcher(None, original.splitlines(), mutated.splitlines(), autojunk=False)
    tag, i1 = next((tag, i1) for tag, i1, *_ in matcher.get_opcodes() if tag != "equal")
    return i1 if tag == "insert" else i1 + 1  # lines added: the line they follow


def function_at(code: str, line: int) -> str:
    """The reference function holding a line, or "module" outside every function."""
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= node.end_lineno:
            return node.name
    return "module"


def compiles(code: str) -> bool:
    try:
        compile(code, "<mutant>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def of_module(module: str) -> list[Mutant]:
    code = reference_source(module)
    seen: set[str] = {code}
    found = []
    for operator, occurrence, mutated in core_mutants(module, code) + domain_mutants(code):
        if mutated in seen or not compiles(mutated):
            continue
        seen.add(mutated)
        line = first_changed_line(code, mutated)
        found.append(Mutant(f"{module}:{operator}:{occurrence}", module, function_at(code, line), operator, line, mutated))
    return found


def every_mutant() -> list[Mutant]:
    """Every first-order mutant of the five reference modules, in lesson order."""
    return [mutant for module in NAMES for mutant in of_module(module)]


def write(mutant: Mutant, folder: Path) -> Path:
    """A copy of the reference in folder with the mutant in place of its module."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in SOLUTIONS_DIR.glob("*.py"):
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / f"{mutant.module}.py").write_text(mutant.source, encoding="utf-8")
    return folder
