"""exercises/ and solutions/ are the same lesson: same names, signatures, docstrings; stubs raise."""

import ast
import inspect

import numpy as np
import pytest

from grader.exercises import EXERCISES, NAMES
from grader.paths import MODULES, SOLUTIONS_DIR

FUNCTIONS = [(e.name, f) for e in EXERCISES for f in e.functions]
STUB_ARGS = {
    "attention_scores": (np.ones((2, 3)), np.ones((2, 3))),
    "causal_mask": (3,),
    "apply_causal_mask": (np.ones((3, 3)),),
    "softmax": (np.ones((2, 3)),),
    "attention_head": (np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2))),
    "multi_head_attention": (np.ones((3, 4)), [(np.ones((4, 2)),) * 3], np.ones((2, 4))),
    "softmax_backward": (np.full((2, 3), 1 / 3), np.ones((2, 3))),
    "attention_head_backward": (
        np.ones((3, 2)),
        np.ones((3, 4)),
        np.ones((4, 2)),
        np.ones((4, 2)),
        np.ones((4, 2)),
    ),
    "sgd_step": ({"w": np.ones(2)}, {"w": np.ones(2)}, 0.1),
    "train": (None, iter(()), 1, 0.1),
}


def public_functions(folder, module):
    """Name -> (signature text, docstring) of the module's top-level functions, read from source."""
    tree = ast.parse((folder / f"{module}.py").read_text())
    return {
        node.name: (ast.unparse(node.args), ast.get_docstring(node))
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    }


def test_registry_matches_the_modules():
    assert NAMES == MODULES
    assert sum(e.points for e in EXERCISES) == 100
    for e in EXERCISES:
        assert set(public_functions(SOLUTIONS_DIR, e.name)) == set(e.functions)


@pytest.mark.parametrize("module", MODULES)
def test_same_names_signatures_and_docstrings(module, pristine):
    stubs = public_functions(pristine, module)
    reference = public_functions(SOLUTIONS_DIR, module)
    assert stubs == reference
    assert all(doc and "Hint:" in doc for _, doc in reference.values())


@pytest.mark.parametrize("module", MODULES)
def test_same_module_docstrings(module, pristine):
    def docstring(folder):
        return ast.get_docstring(ast.parse((folder / f"{module}.py").read_text()))

    assert docstring(pristine) == docstring(SOLUTIONS_DIR)
    assert docstring(SOLUTIONS_DIR).startswith("Exercise ")


@pytest.mark.parametrize(("module", "function"), FUNCTIONS)
def test_every_stub_raises_not_implemented(module, function, pristine_modules):
    stub = getattr(pristine_modules[module], function)
    with pytest.raises(NotImplementedError):
        stub(*STUB_ARGS[function])


@pytest.mark.parametrize(("module", "function"), FUNCTIONS)
def test_stub_bodies_are_only_the_raise(module, function, pristine_modules):
    stub = getattr(pristine_modules[module], function)
    body = ast.parse(inspect.getsource(stub)).body[0].body
    assert len(body) == 2 and isinstance(body[1], ast.Raise)


def test_solutions_have_no_python_loop_over_positions():
    for module in ("scores", "masking", "softmax"):
        tree = ast.parse((SOLUTIONS_DIR / f"{module}.py").read_text())
        assert not any(isinstance(node, (ast.For, ast.While)) for node in ast.walk(tree)), module
