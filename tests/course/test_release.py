"""grader release: the student's kit holds no reference, installs in a fresh venv, and gives public feedback there."""

import ast
import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from venvs import BIN, fresh_venv, pip_install

from grader.check.checks import examples
from grader.cli import main
from grader.course.release import GUIDE, ReleaseError, holds_reference, reference_statements, verify
from grader.course.stubs import stub_source, write_stubs
from grader.paths import KIT_ROOT, MODULES, SOLUTIONS_DIR

pytestmark = pytest.mark.slow  # each test builds or installs a kit in a fresh venv

MUTANTS = Path(__file__).resolve().parents[1] / "mutants" / "wrong"
PUBLIC_LINE = re.compile(
    r"public checks: (\d+) of (\d+) pass · the hidden checks run when your work is graded"
)
# A handful of known mistakes, one or two per exercise, that the student's kit must show failing.
SOME_MUTANTS = (
    "scores__no_scale",
    "masking__fills_zero",
    "softmax__no_max_shift",
    "heads__keys_from_wq",
    "training__head_backward_no_scale",
    "training__train_one_batch",
)


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    """A fresh release, written as an instructor would."""
    out = tmp_path_factory.mktemp("release") / "student-kit"
    result = CliRunner().invoke(main, ["release", str(out)])
    assert result.exit_code == 0, result.output
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/grader"
        in result.output
    )
    return out


def statements(tree) -> list[str]:
    """Every statement at any depth, as ast.unparse writes it (so spacing and comments do not matter)."""
    return [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.stmt)]


def reference_bodies() -> dict[str, list[str]]:
    """Each reference function's statements, docstring left out, by qualified name."""
    found = {}
    for path in sorted(SOLUTIONS_DIR.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                found[f"{path.stem}.{node.name}"] = [
                    text for stmt in body for text in statements(stmt)
                ]
    return found


def code_lines(function: str) -> list[str]:
    """The reference function's code lines, docstring and comments left out, whitespace squeezed: as written and as unparsed."""
    module, _, name = function.partition(".")
    source = (SOLUTIONS_DIR / f"{module}.py").read_text(encoding="utf-8")
    node = next(
        n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name
    )
    body = node.body[1:] if ast.get_docstring(node) else node.body
    written = [
        re.sub(r"#.*$", "", line)
        for stmt in body
        for line in ast.get_source_segment(source, stmt).splitlines()
    ]
    unparsed = ast.unparse(ast.Module(body=body, type_ignores=[])).splitlines()
    return list(dict.fromkeys(squeezed(line) for line in written + unparsed))


def squeezed(text: str) -> str:
    """Text with every run of whitespace as one space."""
    return " ".join(text.split())


def trivial(statement: str) -> bool:
    """Too short to be anyone's in particular: `return losses`, `losses = []`, `d = q.shape[-1]`."""
    return len(statement) < 26


def test_no_file_of_the_release_holds_a_reference_functions_body(kit):
    """No statement of a reference function's body is in a module of the release, nor one of its lines in any other file.

    Docstrings are the spec and are shared with the stubs (the module docstring of training.py gives
    the forward pass as q, k, v = x @ w_q, ...), so statements are compared, not text.
    """
    bodies = reference_bodies()
    assert set(bodies) >= {"softmax.softmax", "training.attention_head_backward", "training.train"}
    found = []
    python = {
        path: set(statements(ast.parse(path.read_text(encoding="utf-8"))))
        for path in kit.rglob("*.py")
    }
    # code in a README or a comment-free text; .py files by their statements
    texts = {
        path: squeezed(path.read_text(encoding="utf-8", errors="replace"))
        for path in kit.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".npz")
    }
    for function, body in bodies.items():
        for statement in (s for s in body if not trivial(s)):
            found += [
                f"{path.relative_to(kit)}: {statement}"
                for path, seen in python.items()
                if statement in seen
            ]
        for line in (line for line in code_lines(function) if not trivial(line)):
            found += [
                f"{path.relative_to(kit)}: {line}" for path, text in texts.items() if line in text
            ]
    assert found == []


def test_the_release_leaves_the_reference_and_the_hidden_checks_behind(kit):
    """No solutions/, no hidden check, no known-mistake module, no instructor command; the kit says it is the student's."""
    files = {path.relative_to(kit).as_posix() for path in kit.rglob("*") if path.is_file()}
    assert not [
        f
        for f in files
        if f.startswith(("solutions", "grader/check/checks/hidden", "tests", "bench"))
    ]
    assert "grader/check/diagnosis.py" not in files and "grader/check/checks/examples.npz" in files
    assert {f for f in files if f.startswith("grader/course/")} == {
        "grader/course/__init__.py",
        "grader/course/errors.py",
        "grader/course/nbgrader/__init__.py",
        "grader/course/nbgrader/cells.py",
    }
    assert {f"exercises/{m}.py" for m in MODULES} <= files and {
        "README.md",
        "pyproject.toml",
        "grader/data/train.txt",
    } <= files
    assert all(
        (kit / "exercises" / f"{m}.py").read_text(encoding="utf-8") == stub_source(m)
        for m in MODULES
    )
    assert 'KIND = "student"' in (kit / "grader" / "kit.py").read_text(encoding="utf-8")
    assert 'name = "attention-by-hand-student"' in (kit / "pyproject.toml").read_text(
        encoding="utf-8"
    )


def test_a_tools_leftovers_in_the_grader_are_not_released(monkeypatch, tmp_path):
    from grader.course import release

    grader = tmp_path / "grader"
    for name in (
        "cli.py",
        "check/checks/.hypothesis/examples/abc",
        "check/.DS_Store",
        "sandbox/worker.py",
    ):
        (grader / name).parent.mkdir(parents=True, exist_ok=True)
        (grader / name).write_text("x")
    monkeypatch.setattr(release, "GRADER_DIR", grader)
    assert sorted(p.as_posix() for p in release.grader_files()) == ["cli.py", "sandbox/worker.py"]


def test_the_students_readme_sets_up_first_and_counts_the_public_checks(kit):
    readme = (kit / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0].strip()
    assert (
        first_block == "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/grader"
    )
    passed, ran = PUBLIC_LINE.search(squeezed(readme)).groups()
    assert passed == ran and int(ran) == sum(
        examples_count for examples_count in public_check_counts().values()
    )
    assert "hidden checks" in readme and "solutions" not in readme


def test_the_students_readme_is_the_student_guide_under_its_set_up_line(kit):
    """docs/students.md is the one source: the release's README holds all of it but its title, after the set-up line."""
    readme = (kit / "README.md").read_text(encoding="utf-8")
    title, _, guide = GUIDE.read_text(encoding="utf-8").partition("\n")
    assert title.startswith("# ") and len(guide.strip().splitlines()) > 50
    assert guide.strip() in readme and readme.index(guide.strip()) > readme.index(
        "```bash\npython3 -m venv .venv"
    )
    told = PUBLIC_LINE.search(
        squeezed(guide)
    ).groups()  # the guide's count is the public checks' own
    assert told == (str(sum(public_check_counts().values())),) * 2


def test_without_the_student_guide_the_release_says_so(monkeypatch, tmp_path):
    from grader.course import release

    monkeypatch.setattr(release, "GUIDE", tmp_path / "docs" / "students.md")
    result = CliRunner().invoke(main, ["release", str(tmp_path / "kit")])
    assert (
        result.exit_code == 2 and "Cannot release: cannot read the student guide" in result.output
    )
    assert (
        "students.md" in result.output
        and "Traceback" not in result.output
        and not (tmp_path / "kit").exists()
    )


def public_check_counts() -> dict[str, int]:
    """The number of public checks of each exercise, from the check files."""
    counts = {}
    for path in (KIT_ROOT / "grader" / "check" / "checks" / "public").glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        counts[path.stem] = sum(
            isinstance(n, ast.FunctionDef) and n.name.startswith("test_") for n in tree.body
        )
    return counts


def test_the_stored_worked_examples_are_the_references(kit):
    """examples.npz of a fresh release holds exactly the inputs and outputs the reference gives now."""
    with np.load(
        kit / "grader" / "check" / "checks" / "examples.npz", allow_pickle=False
    ) as stored:
        stored = {key: stored[key] for key in stored.files}
    fresh = examples.compute(examples.from_reference)
    assert set(stored) == set(fresh)
    assert all(
        stored[k].dtype == fresh[k].dtype and np.array_equal(stored[k], fresh[k]) for k in fresh
    )
    sizes = {key.split("/")[0] for key in fresh}
    assert {"tiny", "comparison batch", "comparison reply"} <= sizes


def test_the_worked_examples_include_the_comparisons_sizes():
    """The comparison's head input width, head and value sizes, batch and a reply's full length are among the examples."""
    from grader.compare import models
    from grader.compare.corpus import load_replies

    # positions, with the start token
    reply = max(len(r) for r in load_replies("train") + load_replies("valid")) + 1
    by_name = {size.name: size for size in examples.SIZES}
    batch, whole = by_name["comparison batch"], by_name["comparison reply"]
    assert (batch.c, batch.d, batch.d_v, batch.dtype) == (
        models.HEAD_IN,
        models.HEAD_IN,
        models.CONTEXT * models.EMBED,
        models.DTYPE,
    )
    assert batch.batch == (16,) and whole.t == reply and examples.COMPARISON_VOCAB == models.VOCAB


def test_a_release_into_a_folder_that_is_not_empty_is_refused_without_force(tmp_path):
    out = tmp_path / "kit"
    (out / "grader" / "check" / "checks" / "hidden").mkdir(parents=True)
    (out / "grader" / "check" / "checks" / "hidden" / "test_scores.py").write_text(
        "# an old hidden check\n"
    )
    (out / "notes.txt").write_text("the instructor's own\n")
    refused = CliRunner().invoke(main, ["release", str(out)])
    assert refused.exit_code == 2 and "not empty" in refused.output and "--force" in refused.output
    forced = CliRunner().invoke(main, ["release", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert (
        not (out / "grader" / "check" / "checks" / "hidden").exists()
        and (out / "notes.txt").exists()
    )


@pytest.mark.parametrize("where", ["inside", "file"])
def test_a_release_into_the_kit_itself_or_a_file_is_refused(tmp_path, where):
    target = KIT_ROOT / "build" / "student-kit" if where == "inside" else tmp_path / "kit.zip"
    if where == "file":
        target.write_text("")
    result = CliRunner().invoke(main, ["release", str(target)])
    assert (
        result.exit_code == 2
        and ("inside the kit" if where == "inside" else "is a file") in result.output
    )
    assert where == "file" or not target.exists()


def run(venv: Path, *args, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    """A command of the fresh venv (grader, python), plain output, in cwd."""
    program = venv / BIN / args[0]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(program), *args[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    if check:
        assert done.returncode in (0, 1), done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def student(kit, tmp_path_factory) -> Path:
    """A fresh venv with the release installed as its README's first line does (pip install -e .)."""
    venv = fresh_venv(tmp_path_factory.mktemp("student") / "venv")
    pip_install(venv, "-e", str(kit))
    return venv


def work_folder(root: Path, *mutants: str) -> Path:
    """A student's folder: exercises/ holding the five reference modules, with these mutants in place."""
    folder = root / "exercises"
    folder.mkdir(parents=True)
    for module in ("__init__", *MODULES):
        shutil.copyfile(SOLUTIONS_DIR / f"{module}.py", folder / f"{module}.py")
    for name in mutants:
        shutil.copyfile(MUTANTS / f"{name}.py", folder / f"{name.split('__')[0]}.py")
    return root


def test_in_the_students_venv_no_module_reaches_the_reference(student, kit, tmp_path):
    """Every module of the installed kit imports; none of them loads solutions, which cannot be imported at all."""
    code = (
        "import importlib, importlib.util, json, pkgutil, sys, grader\n"
        "names = [m.name for m in pkgutil.walk_packages(grader.__path__, 'grader.') if m.name != 'grader.__main__']\n"
        "[importlib.import_module(name) for name in names]\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('solutions', 'exercises') or 'hidden' in m or 'diagnosis' in m)\n"
        "print(json.dumps({'names': names, 'loaded': loaded, 'found': importlib.util.find_spec('solutions') is not None,"
        " 'grader': grader.__file__}))\n"
    )
    seen = json.loads(run(student, "python", "-c", code, cwd=tmp_path).stdout)
    assert Path(seen["grader"]).resolve().is_relative_to(kit.resolve())
    assert len(seen["names"]) > 40 and "grader.check.checks.public.test_training" in seen["names"]
    assert seen["loaded"] == [] and seen["found"] is False
    assert (
        "No module named 'solutions'"
        in run(student, "python", "-c", "import solutions", cwd=tmp_path, check=False).stderr
    )


def test_a_student_gets_public_feedback_in_the_students_venv(student, tmp_path):
    """Stubs, then the reference files: status, check, --json, hint and a short compare, all public and said so."""
    stubs = tmp_path / "stubs"
    write_stubs(stubs / "exercises")
    status = run(student, "grader", cwd=stubs)
    assert (
        status.returncode == 0
        and PUBLIC_LINE.search(status.stdout).groups()[0] == "0"
        and "Welcome" in status.stdout
    )
    folder = work_folder(tmp_path / "work")
    checked = run(student, "grader", "check", "--json", "report.json", cwd=folder)
    assert checked.returncode == 0, checked.stdout
    passed, ran = PUBLIC_LINE.search(checked.stdout).groups()
    assert passed == ran == str(sum(public_check_counts().values()))
    assert "with the public checks" in checked.stdout and "/ 100" not in checked.stdout
    assert not re.search(r"all (checks )?passed|every check", checked.stdout, re.IGNORECASE)
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert data["checks"] == "public" and all(
        c["public"] for e in data["exercises"] for c in e["checks"]
    )
    assert all(e["hidden"] == {"passed": 0, "checks": 0} for e in data["exercises"])
    hint = run(student, "grader", "hint", "softmax", cwd=folder)
    assert (
        hint.returncode == 0
        and "Hint 1 of 4 for softmax" in hint.stdout
        and "every public check" in hint.stdout
    )
    status = run(student, "grader", "status", cwd=folder)
    assert status.returncode == 0 and f"public checks: {ran} of {ran} pass" in status.stdout
    compare = (
        "import sys; from grader.compare.command import compare; "
        "sys.exit(compare(no_mask=True, json_file='figures.json', steps={'mlp': 3, 'attention': 2}, samples=5))"
    )
    trained = run(student, "python", "-c", compare, cwd=folder)
    assert trained.returncode == 0, trained.stdout + trained.stderr
    figures = json.loads((folder / "figures.json").read_text(encoding="utf-8"))
    assert set(figures["models"]) == {"mlp", "attention", "attention_no_mask"}


def test_the_students_kit_shows_known_mistakes_failing(student, tmp_path):
    """A handful of known mistakes fail the public checks of their exercise in the student's kit."""
    for name in SOME_MUTANTS:
        folder = work_folder(tmp_path / name, name)
        exercise = name.split("__")[0]
        done = run(student, "grader", "check", exercise, cwd=folder)
        assert done.returncode == 1 and f"✗ {exercise}" in done.stdout, (name, done.stdout)
        assert "hidden checks run when your work is graded" in done.stdout


def test_in_the_students_kit_later_exercises_run_with_the_students_own_earlier_ones(
    student, tmp_path
):
    folder = work_folder(tmp_path / "own", "softmax__wrong_axis")
    done = run(student, "grader", "check", cwd=folder)
    assert done.returncode == 1
    assert (
        "here heads runs with your own scores, masking and softmax" in done.stdout
        and "fix softmax first" in done.stdout
    )


def test_instructor_commands_are_not_in_the_students_kit(student, tmp_path):
    for args in (
        ["release", "out"],
        ["batch", "x", "--csv", "g.csv"],
        ["nbgrader", "course"],
        ["gradescope", "a.zip"],
    ):
        done = run(student, "grader", *args, cwd=tmp_path, check=False)
        assert (
            done.returncode == 2
            and "student's kit" in done.stderr
            and f"grader {args[0]}" in done.stderr
        )
    done = run(student, "grader", "check", "--solutions", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "no reference solutions" in done.stderr
    helped = run(student, "grader", "--help", cwd=tmp_path).stdout
    assert "release" not in helped and "batch" not in helped and "check" in helped


def test_a_wheel_of_the_release_installs_for_a_hub_and_carries_the_examples(kit, tmp_path):
    """pip wheel of the folder holds the grader, examples and corpus, nothing of the reference; installed, it checks."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(kit),
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = tmp_path.glob("attention_by_hand_student-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "grader/check/checks/examples.npz" in names and "grader/data/valid.txt" in names
    assert not [n for n in names if n.startswith("solutions") or "hidden" in n or "diagnosis" in n]
    hub = fresh_venv(tmp_path / "hub")
    pip_install(hub, str(wheel))
    folder = work_folder(tmp_path / "home", "softmax__global_max")
    done = run(hub, "grader", "check", "softmax", "--json", "r.json", cwd=folder)
    assert (
        done.returncode == 1 and json.loads((folder / "r.json").read_text())["checks"] == "public"
    )
    assert (
        "site-packages"
        in run(hub, "python", "-c", "import grader; print(grader.__file__)", cwd=folder).stdout
    )


@pytest.mark.posix("stops grader watch with SIGINT, as Ctrl-C does")
def test_grader_watch_works_in_the_students_venv(student, tmp_path):
    """watch shows the public verdict of the exercise watched, then stops on Ctrl-C."""
    folder = work_folder(tmp_path / "watching", "softmax__warns_then_fixes")
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    process = subprocess.Popen(
        [str(student / BIN / "grader"), "watch", "softmax"],
        cwd=folder,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in process.stdout], daemon=True
    ).start()
    seen, deadline = [], time.monotonic() + 90
    try:
        while not any(
            re.search(r"softmax: failing, \d+ of \d+ public checks pass", line) for line in seen
        ):
            assert time.monotonic() < deadline, "".join(seen)
            with contextlib.suppress(queue.Empty):
                seen.append(lines.get(timeout=0.2))
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    time.sleep(0.2)
    while not lines.empty():
        seen.append(lines.get())
    assert "public checks pass" in "".join(seen) and "Stopped watching" in "".join(seen)


def test_no_file_of_the_release_holds_a_reference_expression_however_named(kit):
    """Not even renamed or inlined: the public checks state what is right entry by entry, never with the reference's numpy."""
    statements = reference_statements()
    assert any("softmax.softmax" in where for where in statements.values())
    assert any("masking.causal_mask" in where for where in statements.values())
    held = [
        f"{path.relative_to(kit)} {what}"
        for path in sorted(kit.rglob("*.py"))
        for what in holds_reference(path, statements)
    ]
    assert held == []


@pytest.mark.parametrize(
    "name, source",
    [
        (
            "grader/check/checks/public/test_softmax.py",
            "def check(s):\n    return np.exp(s - np.max(s, axis=-1, keepdims=True))\n",
        ),
        (
            "grader/helpers/anything.py",
            "def future(shares):\n    return ~np.tril(np.ones(shares.shape[-2:], dtype=bool))\n",
        ),
    ],
)
def test_a_release_holding_a_reference_statement_is_refused_whatever_the_file_is_named(
    tmp_path, name, source
):
    path = tmp_path / name
    path.parent.mkdir(parents=True)
    path.write_text("import numpy as np\n\n\n" + source, encoding="utf-8")
    with pytest.raises(ReleaseError) as refused:
        verify(tmp_path)
    assert name in str(refused.value) and "line 5 holds" in str(refused.value)
