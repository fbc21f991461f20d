"""`grader try` reaches `grader check`'s verdict on every mutant of the reference (the thorough profile's; tests/agreement.py).

Each mutant is checked with the student's profile, shrinking and all, as the report a student reads
is made, so this takes hours on two cores; tests/student/test_try_agrees.py tries the kit's known
mistakes and right variants in every slow run.
"""

import pytest
from agreement import disagreements, submission, verdicts
from mutants import every_mutant


@pytest.mark.slow
@pytest.mark.thorough
def test_try_reaches_the_checks_verdict_on_every_mutant(tmp_path):
    found = {}
    for mutant in every_mutant():
        apart = disagreements(
            verdicts(submission(tmp_path / mutant.sha, mutant.module, mutant.source), mutant.module)
        )
        found |= {f"{mutant.id} {function}": said[-600:] for function, said in apart.items()}
    assert found == {}
