"""The submission option, the chosen Hypothesis profile (profiles.py), the seed and the `submission` fixture for the checks."""

from pathlib import Path

import pytest
from hypothesis import seed, settings

from grader.check.checks import profiles  # noqa: F401  (registers the profiles)
from grader.check.checks.harness import BUDGET, SEED, Submission
from grader.check.checks.workers import Workers


def pytest_addoption(parser):
    """The submission, seed, time limit and profile, so the checks can also be run by pytest directly."""
    parser.addoption("--submission", type=Path, default=None, help="the folder holding the five modules")
    parser.addoption("--check-seed", type=int, default=SEED, help="the Hypothesis seed of every check")
    parser.addoption("--call-timeout", type=float, default=10.0, help="seconds per call of student code")
    parser.addoption("--budget", type=float, default=BUDGET, help="seconds for all the calls of the run")
    parser.addoption("--check-profile", default="default", help="the Hypothesis profile: default, quick or thorough")


def pytest_configure(config):
    """Load the chosen profile before the checks are imported, so their settings follow it."""
    settings.load_profile(config.getoption("check_profile"))


def pytest_collection_modifyitems(config, items):
    """Give every check the same fixed seed, so a run can be replayed exactly."""
    for item in items:
        test = getattr(item.obj, "drawn", item.obj)  # a check also run at the comparison's sizes wraps its drawn test
        if hasattr(test, "hypothesis"):
            seed(config.getoption("check_seed"))(test)
            test.hypothesis.inner_test = each_example(test.hypothesis.inner_test)


def each_example(inner):
    """The inner test Hypothesis runs once per input, forgetting the last input's printed output first."""

    def run(*args, **kwargs):
        (kwargs["submission"] if "submission" in kwargs else args[0]).printed.new_example()  # the fixture, by name or first
        return inner(*args, **kwargs)

    return run


@pytest.fixture(scope="session")
def workers(request):
    """The submission's worker processes, shared by every check of the run: the runner's, started early, if it gave them."""
    given = [plugin for plugin in request.config.pluginmanager.get_plugins() if isinstance(plugin, Workers)]
    if given:
        yield given[0]  # the runner stops them
        return
    folder = request.config.getoption("submission")
    if folder is None:
        pytest.fail("give the submission folder with --submission DIR")
    pool = Workers(folder, timeout=request.config.getoption("call_timeout"), budget=request.config.getoption("budget"))
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def submission(workers, request):
    """The submission as one exercise sees it: the earlier exercises it uses replaced by the reference."""
    return Submission(workers, request.module.EXERCISE)


@pytest.fixture(autouse=True)
def each_check(submission):
    """Every check starts with nothing printed and nothing called."""
    submission.new_check()
