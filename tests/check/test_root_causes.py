"""Root causes: named once per run from what each failure carries (the module an import failed in, the function a check
failed on), never from a message's words; every note names an exercise this one uses or imports."""

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from grader.check.results import CheckResult, ExerciseResult
from grader.check.runner import note_root_causes
from grader.exercises import BY_NAME, NAMES

FUNCTIONS = [function for name in NAMES for function in BY_NAME[name].functions]


@st.composite
def verdicts(draw) -> list[ExerciseResult]:
    """Some exercises' verdicts, each check with a message of any words and, maybe, a module or function it names."""
    results = []
    for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, unique=True)):
        checks = []
        for number in range(draw(st.integers(1, 3))):
            status = draw(st.sampled_from(["passed", "failed", "error", "not_started"]))
            named = {
                "failed_import": draw(st.sampled_from(["", *NAMES])),
                "blamed_function": draw(st.sampled_from(["", *FUNCTIONS])),
            }
            checks.append(
                CheckResult(f"{name}.c{number}", status, draw(st.text(max_size=40)), **named)
            )
        status = (
            "passed"
            if all(c.status == "passed" for c in checks)
            else draw(st.sampled_from(["failed", "error", "not_started"]))
        )
        results.append(ExerciseResult(name, status, 0.0, 10.0, checks))
    return results


def notes(results) -> list[tuple[str, str]]:
    return [(result.note, result.cause) for result in results]


@given(verdicts(), st.booleans())
def test_a_note_names_an_exercise_used_or_imported_and_is_the_same_however_often_it_is_made(
    results, student_kit
):
    from grader import kit

    kit.is_student_kit, real = (lambda: student_kit), kit.is_student_kit
    try:
        note_root_causes(results)
        once = notes(results)
        note_root_causes(results)
    finally:
        kit.is_student_kit = real
    assert notes(results) == once
    for result in results:
        named = {check.failed_import for check in result.checks if check.status == "error"}
        assert (result.cause == "") == (result.note == "")
        assert result.cause != result.name and result.cause in (
            "",
            *BY_NAME[result.name].uses,
            *named,
        )


@given(verdicts(), st.text(max_size=40))
def test_the_words_of_a_message_name_no_cause(results, words):
    """Words such as "softmax raised ..." or "(masking.py, line 3)" in a message change no note."""
    reworded = [
        dataclasses.replace(r, checks=[dataclasses.replace(c, message=words) for c in r.checks])
        for r in results
    ]
    note_root_causes(results)
    note_root_causes(reworded)
    assert notes(reworded) == notes(results)


def test_a_module_an_import_failed_in_is_the_cause_and_a_message_alone_is_not():
    said = "your training.py cannot be imported: masking.py, which it imports, has a syntax error: expected ':' (masking.py, line 4)."
    named = ExerciseResult(
        "training",
        "error",
        0.0,
        10.0,
        [CheckResult("training.c", "error", said, failed_import="masking")],
    )
    unnamed = ExerciseResult(
        "training", "error", 0.0, 10.0, [CheckResult("training.c", "error", said)]
    )
    note_root_causes([named, unnamed])
    assert (
        named.cause == "masking"
        and "training.py imports your masking.py, which cannot be imported" in named.note
    )
    assert (unnamed.cause, unnamed.note) == ("", "")


def test_a_function_a_check_failed_on_is_the_cause_when_its_exercise_is_not_known_to_fail():
    check = CheckResult("training.c", "failed", "any words", blamed_function="apply_causal_mask")
    training = ExerciseResult("training", "failed", 0.0, 10.0, [check])
    note_root_causes([training])
    assert (
        training.cause == "masking"
        and "call your own apply_causal_mask (in masking.py)" in training.note
    )
    own = ExerciseResult(
        "training", "failed", 0.0, 10.0, [dataclasses.replace(check, blamed_function="sgd_step")]
    )
    note_root_causes([own])
    assert (own.cause, own.note) == ("", "")
