"""Each function's parameter names, from the signatures the student's functions are given: for messages, hints and `grader try`."""

import ast
import re

from grader.exercises import EXERCISES
from grader.paths import EXERCISES_DIR, SOLUTIONS_DIR


def signatures() -> dict[str, tuple[str, ...]]:
    """Each function's parameter names, from the reference's signatures (the full kit) or the stubs' (the student's kit's exercises/).

    A stub the student has made unparsable is read by its def lines, which the stubs write on one line each.
    """
    folder = SOLUTIONS_DIR if SOLUTIONS_DIR.is_dir() else EXERCISES_DIR
    found: dict[str, tuple[str, ...]] = {}
    for exercise in EXERCISES:
        try:
            text = (folder / f"{exercise.name}.py").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        try:
            defs = [
                (node.name, [a.arg for a in node.args.args])
                for node in ast.parse(text).body
                if isinstance(node, ast.FunctionDef)
            ]
        except (SyntaxError, ValueError):
            defs = [
                (name, re.findall(r"(\w+)\s*(?:,|$)", listed))
                for name, listed in re.findall(r"^def (\w+)\(([^)]*)\)", text, re.M)
            ]
        found |= {
            name: tuple(names)
            for name, names in defs
            if name in exercise.functions and name not in found
        }
    return found


ARG_NAMES = signatures()
