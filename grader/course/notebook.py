"""The lesson notebook for nbgrader: the lesson's text, cells to try each function, graded cells."""

import ast
import json

from grader.course.cells import TRY_LIMIT
from grader.exercises import EXERCISES
from grader.paths import EXERCISES_DIR

SETUP = """\
import numpy as np
from grader.course.cells import try_it  # try_it("module", "function", *arguments): runs your saved file"""

# Small inputs whose results are easy to read, one cell per exercise. try_it runs the function in a
# separate process with a time limit, on the module as saved now, and prints what it returned.
TRY = {
    "scores": """\
q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (T=3, d=2)
k = np.array([[1.0, 0.0], [0.0, 1.0]])              # (S=2, d=2)
try_it("scores", "attention_scores", q, k)  # (3, 2); the last row should be [0.707, 0.707]""",
    "masking": """\
try_it("masking", "apply_causal_mask", np.zeros((3, 3)))  # -inf above the diagonal, 0 elsewhere""",
    "softmax": """\
try_it("softmax", "softmax", np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -np.inf]]))  # [0.09, 0.245, 0.665] and [0.5, 0.5, 0]""",
    "heads": """\
rng = np.random.default_rng(0)
x = rng.normal(size=(4, 3))                                  # (T=4, C=3)
w_q, w_k, w_v = (rng.normal(size=(3, 2)) for _ in range(3))  # (C=3, d=2)
try_it("heads", "attention_head", x, w_q, w_k, w_v)  # out (4, 2); shares (4, 4): rows sum to 1, zeros above the diagonal""",
    "training": """\
params, grads = {"w": np.array([1.0, 2.0])}, {"w": np.array([0.5, -0.5])}
try_it("training", "sgd_step", params, grads, 0.1)  # params afterwards: w = [0.95, 2.05]""",
}

INTRO = """\
# Attention by Hand

You build self-attention by hand in numpy, in five small modules in the folder `exercises/`:
{order}. Open each module, read its docstrings (the shapes and a hint are there), and replace
`raise NotImplementedError` with your code. Save the file, then try your function in the cell
under its exercise: it runs the module as saved, and stops it after {limit:g} s if it does not return.

Each exercise ends with a locked cell that grades it when your work is collected. To check your
work yourself before you submit, run `grader check` in a terminal in this folder (or
`grader check softmax` for one exercise). Submit this notebook together with `exercises/`."""


def build(assignment: str) -> dict:
    """The notebook as nbformat 4 JSON: intro, setup, then lesson text, try cell and test cell per exercise."""
    order = " → ".join(f"`{exercise.name}`" for exercise in EXERCISES)
    cells = [markdown("intro", INTRO.format(order=order, limit=TRY_LIMIT)), code("setup", SETUP)]
    for number, exercise in enumerate(EXERCISES, start=1):
        name = exercise.name
        cells += [markdown(f"lesson-{name}", lesson(exercise)), code(f"try-{name}", TRY[name]), test_cell(number, exercise)]
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
            "language_info": {"name": "python"},
            "title": assignment,
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def lesson(exercise) -> str:
    """The exercise's text: the module docstring, then each function's first docstring line."""
    tree = ast.parse((EXERCISES_DIR / f"{exercise.name}.py").read_text(encoding="utf-8"))
    first, _, body = ast.get_docstring(tree).partition("\n")
    lines = [f"## {first.removesuffix('.')} ({exercise.points:g} points)", "", body.strip(), ""]
    lines.append(f"In `exercises/{exercise.name}.py`:")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            arguments = ", ".join(argument.arg for argument in node.args.args)
            summary = ast.get_docstring(node).partition("\n")[0]
            lines.append(f"- `{node.name}({arguments})`: {summary}")
    return "\n".join(lines)


def test_cell(number: int, exercise) -> dict:
    """The locked autograder cell: a visible note, then the hidden call that grades the exercise."""
    source = f"""\
# Autograder for exercise {number}, {exercise.name} ({exercise.points:g} points): when your work is
# graded, this cell runs the kit's hidden checks on exercises/{exercise.name}.py and shows what failed.
# Check it yourself first, in a terminal in this folder:  grader check {exercise.name}
### BEGIN HIDDEN TESTS
import os, sys
_here, _path = os.getcwd(), sys.path[:]  # files of the submission folder must not stand in for the kit
sys.path[:] = [_p for _p in _path if os.path.abspath(_p or ".") != _here]
for _name, _module in list(sys.modules.items()):  # nor modules that earlier cells imported or changed
    _file = os.path.abspath(getattr(_module, "__file__", None) or os.sep)
    if _file.startswith(_here + os.sep) or _name.partition(".")[0] == "grader":
        del sys.modules[_name]
from grader.course.cells import grade
sys.path[:] = _path
_points = grade({exercise.name!r})
float(min(max(_points, 0), {exercise.points!r}))
### END HIDDEN TESTS"""
    cell = code(f"test-{exercise.name}", source)
    cell["metadata"]["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "points": exercise.points,
        "grade_id": f"test_{exercise.name}",
        "schema_version": 3,
    }
    return cell


def markdown(cell_id: str, source: str) -> dict:
    """A markdown cell."""
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": source}


def code(cell_id: str, source: str) -> dict:
    """A code cell that has not run yet."""
    return {"cell_type": "code", "id": cell_id, "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def dumps(assignment: str) -> str:
    """The notebook as the text of a .ipynb file."""
    return json.dumps(build(assignment), indent=1, ensure_ascii=False) + "\n"
