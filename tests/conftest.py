"""Fixtures shared by the kit's tests, what the tests need installed, and the skipping of tests that need an OS this one is not
or the nbgrader extra where it is not installed."""

import importlib
import os
import re
import shutil
import signal
import sys
import tempfile
from importlib import metadata, util

import pytest
from hypothesis import settings
from packaging.requirements import Requirement

from grader.check.checks.replay import CACHE_VAR
from grader.course.stubs import write_stubs
from grader.paths import MODULES
from grader.sandbox.portable import simulate_other_os, simulating_other_os

ONLY = {"linux": "Linux", "posix": "POSIX"}  # marker: what a test so marked needs
HEADER = "These are the kit's own tests, for its developers. A student checks their work with `grader check`."
INSTALL = "pip install -e '.[test,nbgrader]'"  # the README's test command installs both extras
NOT_FOUND = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")

# tests/test_workflow.py runs this file's hook on a small suite of its own
pytest_plugins = ["pytester"]

# The kit's own property tests (generated attacks, hostile strings): a quick profile for the inner loop, a thorough one,
# on Hypothesis' own `ci` (derandomized, no deadline), for CI: ATTENTION_BY_HAND_HYPOTHESIS=thorough. The checks a
# student's code is graded by have their own profiles (grader/check/checks/profiles.py), loaded around each run.
PROFILE_VAR = "ATTENTION_BY_HAND_HYPOTHESIS"
settings.register_profile("quick", max_examples=30, deadline=None)
settings.register_profile("thorough", settings.get_profile("ci"), max_examples=300)
settings.load_profile(os.environ.get(PROFILE_VAR, "quick"))


@pytest.fixture
def submission(tmp_path):
    """A fresh copy of the stubs, as a student has it after cloning (never the kit's exercises/, which may hold work)."""
    return write_stubs(tmp_path / "exercises")


@pytest.fixture(scope="session")
def pristine(tmp_path_factory):
    """The stubs as the kit ships them, whatever the kit's exercises/ holds: a folder to read or copy, not to change."""
    return write_stubs(tmp_path_factory.mktemp("pristine") / "exercises")


@pytest.fixture(scope="session")
def pristine_modules(pristine):
    """The pristine stubs imported as the package pristine_exercises (never the kit's exercises/): name -> module."""
    spec = util.spec_from_file_location(
        "pristine_exercises", pristine / "__init__.py", submodule_search_locations=[str(pristine)]
    )
    sys.modules[spec.name] = util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules[spec.name])
    return {name: importlib.import_module(f"{spec.name}.{name}") for name in MODULES}


def missing_extras(extra: str) -> list[str]:
    """The packages of one extra (test or nbgrader), as the kit's metadata lists them, not installed here (or too old)."""
    try:
        wanted = [Requirement(text) for text in metadata.requires("attention-by-hand") or ()]
    except metadata.PackageNotFoundError:
        return ["attention-by-hand itself"]
    missing = []
    for requirement in wanted:
        marker = requirement.marker
        if (
            marker is None
            or marker.evaluate({"extra": ""})
            or not marker.evaluate({"extra": extra})
        ):
            continue  # a main dependency, or another extra's, or not for this OS
        try:
            if requirement.specifier.contains(metadata.version(requirement.name), prereleases=True):
                continue
        except metadata.PackageNotFoundError:
            pass
        missing.append(f"{requirement.name}{requirement.specifier}")
    return missing


def pytest_report_header(config):
    """The first lines after pytest's own: who these tests are for, and which are skipped for want of nbgrader."""
    return [HEADER, *([config.without_nbgrader] if config.without_nbgrader else [])]


def pytest_configure(config):
    """Stop at once, saying what to install, when the test extra is missing; else get the process ready.

    Without the nbgrader extra the tests run, those that need it skipped, saying why.
    """
    if missing := missing_extras("test"):
        raise pytest.UsageError(
            f"{HEADER}\nThey need the kit's test extra; this environment lacks {', '.join(missing)}."
            f"\nTo run them, in the kit's folder and its venv: {INSTALL}"
        )
    lacking = missing_extras("nbgrader")
    config.without_nbgrader = (
        f"needs the nbgrader extra, not installed here ({', '.join(lacking)}): {INSTALL}"
        if lacking
        else ""
    )
    # Under ATTENTION_BY_HAND_SIMULATE_OTHER_OS=1 (tests/test_portable.py), the APIs Windows lacks raise here too.
    if simulating_other_os():
        simulate_other_os()
    # the checks' drawn examples kept for this run only, never in the developer's own cache
    if CACHE_VAR not in os.environ:
        os.environ[CACHE_VAR] = config.examples_cache = tempfile.mkdtemp(prefix="abh-examples-")
    # A run started in the background by a shell inherits SIGINT ignored (under nohup, SIGHUP), and so would every
    # grader the tests start: give them back, so the tests of Ctrl-C and a closed terminal see what those do.
    if hasattr(signal, "SIGINT") and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    # what the kit prints for a terminal is laid out 100 columns wide, whatever the terminal running the tests
    os.environ["COLUMNS"] = "100"


def pytest_unconfigure(config):
    """Remove the run's own cache of drawn examples."""
    if folder := getattr(config, "examples_cache", None):
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ[CACHE_VAR]


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """Without the nbgrader extra, a test module that cannot import a package not installed here is skipped, saying why."""
    report = yield
    missing = (
        NOT_FOUND.search(str(report.longrepr))
        if report.failed and isinstance(collector, pytest.Module)
        else None
    )
    if (
        missing
        and collector.config.without_nbgrader
        and util.find_spec(missing[1].split(".")[0]) is None
    ):
        report.outcome, report.longrepr = (
            "skipped",
            (str(collector.path), 0, f"Skipped: {collector.config.without_nbgrader}"),
        )
    return report


def pytest_addoption(parser):
    parser.addoption(
        "--thorough",
        action="store_true",
        help="also run the tests marked thorough (the mutation analysis, tests/mutation)",
    )


def pytest_collection_modifyitems(config, items):
    """Skip each test marked linux or posix on an OS without it, giving the marker's reason, which it must have; each
    marked nbgrader where the nbgrader extra is not installed; and those marked thorough unless --thorough is given."""
    here = {"linux": sys.platform == "linux", "posix": os.name == "posix"}
    for item in items:
        if config.without_nbgrader and item.get_closest_marker("nbgrader"):
            item.add_marker(pytest.mark.skip(reason=config.without_nbgrader))
        if item.get_closest_marker("thorough") and not config.getoption("thorough"):
            item.add_marker(pytest.mark.skip(reason="the thorough profile's: run with --thorough"))
        for name, needs in ONLY.items():
            marker = item.get_closest_marker(name)
            if marker is None:
                continue
            if len(marker.args) != 1 or not isinstance(marker.args[0], str):
                raise pytest.UsageError(
                    f'{item.nodeid}: say what it needs {needs} for: @pytest.mark.{name}("what it uses")'
                )
            if not here[name]:
                item.add_marker(pytest.mark.skip(reason=f"needs {needs}: {marker.args[0]}"))
