"""For pytest run on the checks directly: the submission option, the Hypothesis profile (profiles.py), the seed and the `submission` fixture.

The grader runs the checks itself, with the same (grader.check.collector).
"""

from pathlib import Path

import pytest
from hypothesis import settings

from grader.check.checks import profiles  # noqa: F401  (registers the profiles)
from grader.check.checks.harness import BUDGET, SEED, Submission
from grader.check.checks.seeding import seeded
from grader.check.checks.workers import StudentCodePool


def pytest_addoption(parser):
    """The submission, seed, time limit and profile, so the checks can also be run by pytest directly."""
    parser.addoption(
        "--submission", type=Path, default=None, help="the folder holding the five modules"
    )
    parser.addoption(
        "--check-seed", type=int, default=SEED, help="the Hypothesis seed of every check"
    )
    parser.addoption(
        "--call-timeout", type=float, default=10.0, help="seconds per call of student code"
    )
    parser.addoption(
        "--budget", type=float, default=BUDGET, help="seconds for all the calls of the run"
    )
    parser.addoption(
        "--check-profile",
        default="default",
        help="the Hypothesis profile: default, quick or thorough",
    )


def pytest_configure(config):
    """Load the chosen profile before the checks are imported, so their settings follow it."""
    settings.load_profile(config.getoption("check_profile"))


def pytest_collection_modifyitems(config, items):
    """Give every check the same fixed seed, so a run can be replayed exactly."""
    for item in items:
        seeded(item.obj, config.getoption("check_seed"))


@pytest.fixture(scope="session")
def workers(request):
    """The submission's worker processes, shared by every check of the run."""
    folder = request.config.getoption("submission")
    if folder is None:
        pytest.fail("give the submission folder with --submission DIR")
    pool = StudentCodePool(
        folder,
        timeout=request.config.getoption("call_timeout"),
        budget=request.config.getoption("budget"),
    )
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
