import pytest
from mutant_verdicts import graded


@pytest.fixture(scope="session")
def verdicts(tmp_path_factory):
    """Every mutant's verdict on an idle machine, graded once for every test that reads them (they are slow)."""
    return graded(tmp_path_factory.mktemp("mutants"))
