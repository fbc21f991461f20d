"""The stubs come from the reference, not from the kit's exercises/: the kit's tests pass whatever a student wrote there."""

import ast
import json
import shutil
import subprocess
import sys
from importlib import metadata

import pytest

from grader.check.untouched import RECORD, STUBS
from grader.course.stubs import digests, not_started, stub_source
from grader.paths import KIT_ROOT, MODULES, SOLUTIONS_DIR

# the tests that take stubs, run in a copy of the kit whose exercises/ holds a student's work
STUB_TESTS = [
    "tests/check/test_checks.py::test_stubs_are_not_started",
    "tests/test_layout.py",
    "tests/sandbox/test_sandbox.py::test_a_stub_is_not_started",
    "tests/check/test_state.py",
    "tests/course/test_stubs.py::test_the_stubs_are_exercises_as_committed",
    "tests/test_work_is_here.py",
]
WORK_IS_HERE = """from pathlib import Path

from grader.paths import EXERCISES_DIR, KIT_ROOT


def test_the_tests_here_see_this_copy_and_its_work():
    assert KIT_ROOT == Path(__file__).resolve().parents[1] and "NotImplementedError" not in (EXERCISES_DIR / "softmax.py").read_text()
"""


def committed(module: str) -> str:
    """exercises/MODULE.py as git has it, or a skip saying why there is nothing to compare with."""
    try:
        run = subprocess.run(
            ["git", "show", f":./exercises/{module}.py"],
            cwd=KIT_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except FileNotFoundError:
        pytest.skip("git is not installed: no committed exercises/ to compare the stubs with")
    if run.returncode != 0:
        pytest.skip(
            f"the kit is not a git checkout: no committed exercises/ to compare the stubs with ({run.stderr.strip()[:120]})"
        )
    return run.stdout


def only_stubs(text: str) -> bool:
    """Whether every function of the module is its docstring and a raise, as a stub is."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    return all(
        len(node.body) == 2 and isinstance(node.body[1], ast.Raise)
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    )


@pytest.mark.parametrize("module", ("__init__", *MODULES))
def test_the_stubs_are_exercises_as_committed(module):
    """The stubs made from solutions/ are exercises/ as committed, byte for byte, so the two cannot drift apart."""
    text = committed(module)
    if not only_stubs(text):
        pytest.skip(
            f"exercises/{module}.py as committed holds work, not a stub: nothing to compare"
        )
    assert stub_source(module) == text


@pytest.mark.slow
def test_the_kits_tests_pass_whatever_exercises_holds(tmp_path):
    """In a copy of the kit whose exercises/ holds the reference (and an __init__.py that does not parse), the stub tests pass."""
    kit = tmp_path / "kit"
    for name in ("grader", "solutions", "tests"):
        shutil.copytree(
            KIT_ROOT / name,
            kit / name,
            ignore=shutil.ignore_patterns("__pycache__", ".grader", ".hypothesis"),
        )
    shutil.copy(KIT_ROOT / "pyproject.toml", kit)
    shutil.copytree(SOLUTIONS_DIR, kit / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    (kit / "exercises" / "__init__.py").write_text("def half_written(:\n", encoding="utf-8")
    (kit / "tests" / "test_work_is_here.py").write_text(WORK_IS_HERE, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *STUB_TESTS],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    # before pytest's rootdir: line
    header = next(line for line in run.stdout.splitlines() if "kit's own tests" in line)
    assert "`grader check`" in header and run.stdout.index(header) < run.stdout.index("rootdir:")


def test_without_the_test_extras_the_run_stops_saying_what_to_install(pytester, monkeypatch):
    """A missing test extra (here jsonschema) stops the session at once, with one message: who the tests are for, what to install."""
    real = metadata.version

    def version(name):
        if name == "jsonschema":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", version)
    pytester.makeconftest((KIT_ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile("def test_never_runs():\n    raise AssertionError\n")
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = result.stderr.str()
    assert said.count("\n") == 3 and "kit's own tests" in said and "`grader check`" in said
    assert "lacks jsonschema>=4.18." in said and "pip install -e '.[test,nbgrader]'" in said


def test_the_stubs_digests_are_the_stubs():
    """grader/check/stubs.json, by which the grader knows an untouched stub without a worker, is the stubs' (python -m grader.course.stubs)."""
    assert json.loads(STUBS.read_text(encoding="utf-8")) == digests()


def test_the_record_of_the_stubs_verdicts_is_a_run_of_the_public_checks():
    """grader/check/not_started.json, which a stub's public checks end as, is what running them gives (python -m grader.course.stubs)."""
    assert json.loads(RECORD.read_text(encoding="utf-8")) == not_started(), (
        "run `python -m grader.course.stubs` to write it again"
    )
