"""The lesson notebook for nbgrader: the lesson's text, cells to try each function, graded cells."""

import ast
import json

from grader.course.nbgrader.cells import TRY_LIMIT
from grader.course.stubs import stub_source
from grader.exercises import EXERCISES

SETUP = """\
import numpy as np
from grader.course.nbgrader.cells import try_it  # try_it("module", "function", *arguments): runs your saved file"""

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

Each exercise ends with a locked graded cell: run it to check your saved module with the checks
your kit has (Validate runs them all; `grader check` in a terminal in this folder does the same).
When your work is graded, the hidden checks grade the modules you submitted, and their report and
your points replace that cell's output. Submit this notebook together with `exercises/`."""


def build(assignment: str) -> dict:
    """The notebook as nbformat 4 JSON: intro, setup, then lesson text, try cell and test cell per exercise."""
    order = " → ".join(f"`{exercise.name}`" for exercise in EXERCISES)
    cells = [markdown("intro", INTRO.format(order=order, limit=TRY_LIMIT)), code("setup", SETUP)]
    for number, exercise in enumerate(EXERCISES, start=1):
        name = exercise.name
        cells += [
            markdown(f"lesson-{name}", lesson(exercise)),
            code(f"try-{name}", TRY[name]),
            test_cell(number, exercise),
        ]
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            },
            "language_info": {"name": "python"},
            "title": assignment,
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def lesson(exercise) -> str:
    """The exercise's text: the module docstring, then each function's first docstring line."""
    tree = ast.parse(stub_source(exercise.name))
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
    """The locked graded cell: it checks the saved module when run; at autograde the kit writes its output."""
    name = exercise.name
    source = f"""\
# Graded: exercise {number}, {name} ({exercise.points:g} points). Run this cell (or Validate)
# to check exercises/{name}.py as saved; in a terminal: grader check {name}
# At grading, the hidden checks grade the exercises/ you submitted, and their
# report and your points replace this cell's output.
from grader.course.nbgrader.cells import check
check({name!r})
### BEGIN HIDDEN TESTS
from grader.course.nbgrader.cells import not_graded_here
not_graded_here({name!r})  # at autograde the kit grades the modules and writes this cell's output
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
    return {
        "cell_type": "code",
        "id": cell_id,
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": source,
    }


def dumps(assignment: str) -> str:
    """The notebook as the text of a .ipynb file."""
    return json.dumps(build(assignment), indent=1, ensure_ascii=False) + "\n"
