"""`grader try` reaches `grader check`'s verdict, function by function, on every known mistake and every right variant.

Try runs the input the report showed first and judges it with the checks' own comparisons
(grader.student.judging); where it cannot see what failed (a warning, an input too large to keep),
it says what the check found of the same files. Each case is one submission: the check runs, its
verdict is saved as `grader check` saves the student's own, and try runs every function of the
exercise. The mutation analysis' mutants are tried the same way in tests/mutation/test_try_on_mutants.py.
"""

import traceback
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from agreement import TOLD_BY_RECORD, disagreements, submission, verdicts

from grader.paths import SOLUTIONS_DIR

MUTANTS = Path(__file__).resolve().parents[1] / "mutants"
MUTABLE_DEFAULT = (
    "def train(model, batches, steps, lr):",
    "def train(model, batches, steps, lr, losses=[]):",
)
CASES = {
    path.stem: (path.name.split("__")[0], path.read_text(encoding="utf-8"))
    for path in sorted(MUTANTS.glob("*/*.py"))
}
CASES["heads__reference"] = ("heads", (SOLUTIONS_DIR / "heads.py").read_text(encoding="utf-8"))
CASES["training__train_mutable_default"] = (
    "training",
    (SOLUTIONS_DIR / "training.py")
    .read_text(encoding="utf-8")
    .replace(*MUTABLE_DEFAULT)
    .replace("    losses = []\n", ""),
)


def tried(case: str, scratch: Path) -> dict | str:
    """A case's verdicts (agreement.verdicts), or what stopped them (run in a pool process)."""
    module, source = CASES[case]
    try:
        return verdicts(submission(scratch / case, module, source), module)
    except Exception as error:  # the case's test fails with it, the other cases go on
        return "".join(traceback.format_exception(error))


@pytest.fixture(scope="module")
def every_case(tmp_path_factory) -> dict:
    """Every case's verdicts, two cases at a time (each alone keeps about one of the two cores busy)."""
    scratch, cases = tmp_path_factory.mktemp("try"), sorted(CASES)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        return dict(zip(cases, pool.map(tried, cases, [scratch] * len(cases))))


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_try_reaches_the_checks_verdict(case, every_case):
    found = every_case[case]
    assert isinstance(found, dict), found
    assert disagreements(found) == {}


@pytest.mark.slow
def test_the_three_known_disagreements_are_try_s_own_verdicts(tmp_path):
    """A right multi_head_attention agrees; a train with a mutable default and a float32 sgd_step differ, by try's own comparison."""
    heads = verdicts(submission(tmp_path / "heads", *CASES["heads__reference"]), "heads")
    assert (
        not heads["multi_head_attention"]["try"]
        and "they agree" in heads["multi_head_attention"]["output"]
    )
    training = verdicts(
        submission(tmp_path / "train", *CASES["training__train_mutable_default"]), "training"
    )
    said = training["train"]["output"]
    assert (
        training["train"]["try"]
        and "your result['losses'] should be a list of" in said
        and "they differ" in said
    ), said
    stored = verdicts(
        submission(tmp_path / "sgd", *CASES["training__sgd_stores_float32"]), "training"
    )
    said = stored["sgd_step"]["output"]
    assert "params['w'] should be float64, as its input is, but its dtype is float32" in said, said
    assert (
        "Your result is float32" in said
        and "they differ" in said
        and not any(told in said for told in TOLD_BY_RECORD)
    )
