"""The import rule: student code may import numpy, the standard library and its sibling modules, and nothing else, everywhere.

A library is refused because the grader does not allow it, not because it is missing: the same
message whether it is installed here (hypothesis, psutil), absent (scipy, torch) or the grader
itself, at import and inside a call, in the worker, through the checks, on the portable path and
in `grader try`.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from folders import submission

from grader.check.runner import run_checks
from grader.paths import KIT_ROOT
from grader.sandbox.errors import StudentError
from grader.sandbox.handle import StudentCode
from grader.sandbox.portable import SIMULATE_VAR, simulating_other_os
from grader.sandbox.worker.codec import PACKAGE
from grader.sandbox.worker.imports import ALLOWED, RULE

X = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -np.inf]])
# statement: the library it names; scipy and torch are absent here, hypothesis and psutil installed, grader loaded in the worker
REFUSED = {
    "import scipy.special": "scipy",
    "import torch": "torch",
    "import hypothesis": "hypothesis",
    "from psutil import Process": "psutil",
    "from grader.sandbox import codec": "grader",
    'importlib.import_module("scipy")': "scipy",
    '__import__("sklearn.utils")': "sklearn",
}


def refusal(library: str, line: int, statement: str, file: str = "softmax.py") -> str:
    """The message the student gets for importing library at that line."""
    return f"{file} imports {library}, which the grader does not allow: {RULE} ({file}, line {line}: {statement})."


def module_level(statement: str) -> str:
    return f"import importlib\n{statement}\n\n\ndef softmax(x):\n    return x\n"


def in_a_call(statement: str) -> str:
    return f"import importlib\n\n\ndef softmax(x):\n    {statement}\n    return x\n"


def test_the_rule_is_numpy_the_standard_library_and_the_siblings():
    assert {"numpy", "math", "functools", "itertools", "os", PACKAGE} <= ALLOWED
    assert (
        not {
            "scipy",
            "torch",
            "jax",
            "sklearn",
            "hypothesis",
            "psutil",
            "pytest",
            "grader",
            "solutions",
            "exercises",
        }
        & ALLOWED
    )


@pytest.mark.parametrize("statement", REFUSED)
@pytest.mark.parametrize("place, line", [(module_level, 2), (in_a_call, 5)])
def test_a_library_is_refused_at_import_and_in_a_call_installed_or_not(
    tmp_path, statement, place, line
):
    folder = submission(tmp_path, softmax=place(statement))
    with StudentCode(folder) as student:
        for _ in range(2):  # the same verdict again, from the same worker or a fresh one
            with pytest.raises(StudentError) as caught:
                student.call("softmax", "softmax", X)
            assert (caught.value.kind, caught.value.message) == (
                "refused",
                refusal(REFUSED[statement], line, statement),
            )
        assert student.call("scores", "attention_scores", X, X).value.shape == (2, 2)


def test_a_module_that_imports_a_refused_sibling_is_told_which_file(tmp_path):
    folder = submission(tmp_path, softmax=module_level("import scipy.special"))
    with StudentCode(folder) as student, pytest.raises(StudentError) as caught:
        student.call("heads", "attention_head", *[np.ones((2, 2))] * 4)
    assert (caught.value.kind, caught.value.message) == (
        "refused",
        refusal("scipy", 2, "import scipy.special"),
    )


def test_siblings_the_standard_library_and_numpy_lazy_submodules_are_allowed(tmp_path):
    folder = submission(
        tmp_path,
        softmax="""
        import collections
        import math
        import numpy as np
        from . import scores
        from .masking import causal_mask

        def softmax(x):
            import functools
            import sys
            lazy = "numpy.testing" not in sys.modules
            np.testing.assert_allclose(x, x)
            drawn = np.random.default_rng(0).normal(size=3)
            dot = np.einsum("ij,ij->", x[:, :2], x[:, :2])
            return lazy, float(np.linalg.norm([3.0, 4.0])), drawn, float(dot), math.pi, scores.attention_scores(x, x).shape, \\
                causal_mask(2).tolist(), functools.reduce(int.__add__, collections.Counter("aab").values())
        """,
    )
    with StudentCode(folder) as student:
        lazy, norm, drawn, dot, pi, shape, mask, count = student.call("softmax", "softmax", X).value
    assert (
        lazy
        and norm == 5.0
        and np.array_equal(drawn, np.random.default_rng(0).normal(size=3))
        and dot == 5.25
    )
    assert pi == np.pi and shape == (2, 2) and mask == [[True, False], [True, True]] and count == 3


def test_a_refused_library_looks_absent_to_code_that_falls_back(tmp_path):
    folder = submission(
        tmp_path,
        softmax="""
        try:
            import hypothesis
        except ImportError:  # installed here, absent as far as the grader's rule goes: the same everywhere
            hypothesis = None

        def softmax(x):
            return hypothesis is None
        """,
    )
    with StudentCode(folder) as student:
        assert student.call("softmax", "softmax", X).value is True


@pytest.mark.slow
def test_through_the_checks_the_exercise_is_an_error_and_the_others_keep_their_verdict(tmp_path):
    folder = submission(
        tmp_path, softmax=in_a_call('scipy = importlib.import_module("scipy.special")')
    )
    # training is left out: after any module-wide error of softmax.py (a syntax error too) its checks that use
    # the reference softmax halt as well, since the harness looks up broken modules before it serves the reference
    report = run_checks(
        folder, ["scores", "masking", "softmax", "heads"], profile="quick", timeout=5.0
    )
    status = {result.name: result.status for result in report.exercises}
    assert status == {
        "scores": "passed",
        "masking": "passed",
        "softmax": "error",
        "heads": "passed",
    }
    (softmax,) = [result for result in report.exercises if result.name == "softmax"]
    wanted = refusal("scipy", 5, 'scipy = importlib.import_module("scipy.special")')
    assert softmax.checks and all(
        check.message.startswith(wanted) for check in softmax.checks if check.status != "passed"
    )
    assert softmax.points == 0


def grader_try(folder, cwd):
    return subprocess.run(
        [sys.executable, "-m", "grader", "try", "softmax", "--submission", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "statement", ["import torch", "import hypothesis", 'importlib.import_module("scipy")']
)
@pytest.mark.parametrize("place, line", [(module_level, 2), (in_a_call, 5)])
def test_grader_try_refuses_the_same_imports_with_the_same_words(tmp_path, statement, place, line):
    run = grader_try(submission(tmp_path, softmax=place(statement)), tmp_path)
    assert run.returncode == 1 and "softmax did not return" in run.stdout, run.stdout + run.stderr
    assert run.stderr.strip() == refusal(REFUSED[statement], line, statement)


@pytest.mark.slow
def test_grader_try_allows_numpy_and_the_standard_library(tmp_path):
    folder = submission(
        tmp_path,
        softmax="""
        import math
        import numpy as np

        def softmax(x):
            import functools
            shifted = np.exp(x - np.max(x, axis=-1, keepdims=True))
            np.testing.assert_equal(math.isfinite(1.0), True)
            return functools.reduce(np.divide, [shifted, np.sum(shifted, axis=-1, keepdims=True)])
        """,
    )
    run = grader_try(folder, tmp_path)
    assert run.returncode == 0 and "they agree" in run.stdout, run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.linux(
    "the point is to take Linux's mechanisms away on Linux; elsewhere the normal run is the portable one"
)
@pytest.mark.skipif(simulating_other_os(), reason="this is already the simulated run")
def test_the_portable_path_gives_the_same_verdicts():
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            __file__,
            "-k",
            "not portable and not grader_try",
        ],
        cwd=KIT_ROOT,
        env={**os.environ, SIMULATE_VAR: "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0 and " passed" in run.stdout and "failed" not in run.stdout, (
        run.stdout[-6000:] + run.stderr[-2000:]
    )
