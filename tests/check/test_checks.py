"""The checks' verdicts: the reference passes, stubs are not started, every known mistake fails, publicly too."""

import re
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
import replayed
from mutant_verdicts import MUTANTS, RIGHT, WRONG, exercise_of, submission_with

from grader.check.checks.harness import reference_functions
from grader.check.checks.scale import SAID
from grader.check.runner import run_checks
from grader.course.stubs import write_stubs
from grader.exercises import BY_NAME, NAMES
from grader.paths import CHECKS_DIR, SOLUTIONS_DIR

# Words the message must contain where the mistake is one the diagnosis knows by name.
NAMED = {
    "scores__no_scale": "without dividing by √d",
    "scores__divides_by_d": "divided by d instead of √d",
    "masking__fills_zero": "set to 0 instead of -inf",
    "masking__hides_diagonal": "may not look at itself",
    "masking__large_negative": "large negative number",
    "softmax__no_max_shift": "without subtracting each row's maximum",
    "softmax__warns_then_fixes": "gave a warning: RuntimeWarning: overflow encountered in exp",
    "heads__keys_from_wq": "keys made with the query weights",
    "heads__reverse_order": "reverse order",
    "training__head_backward_no_scale": "without the 1/√d",
    "training__sgd_climbs": "a step up the gradient",
    "softmax__epsilon_below": "a small number (1e-08) added to the sum below the line",
    "softmax__float32": "Your result is float32, but the input is float64",
    "training__train_zip": "zip(batches, range(steps)) does that",
    "training__train_reversed": "train used the batches in another order than given",
    "training__train_shuffled": "train used the batches in another order than given",
    "heads__scores_by_sqrt_C": "Your shares are the softmax of the right scores times 0.816497 (= √2/√3)",
    "scores__floor_division": "This looks like a known mistake: // (floor division) in place of /",
    "scores__d_from_second_axis": "This looks like a known mistake: d taken as q.shape[1]",
    "scores__sqrt_of_T": "This looks like a known mistake: q·k divided by √T",
    "softmax__max_minus_x": "This looks like a known mistake: exp(max − x) in place of exp(x − max)",
    "masking__where_swapped": "This looks like a known mistake: np.where's two choices swapped",
    "training__sgd_float32": "Keep float64 (look for .astype or np.float32)",  # sgd_step's own check sees the dtype now
}

# Mistakes that only the comparison's sizes show: every small input Hypothesis draws passes.
AT_SCALE_ONLY = {
    "masking__block_size_128",
    "softmax__max_of_first_64",
    "scores__keys_cut_at_128",
    "heads__mask_block_128",
    "training__train_caps_steps",
    "training__sgd_first_eight",
}

# Known mistakes that only the hidden checks catch: the student's kit shows them passing, the instructor's report names them.
PUBLIC_MISSES = {"heads__fitted_to_worked_examples"}

# In training, the function a mutant's name says is wrong: each is checked with the ones it builds on from the reference.
OWN_FUNCTION = {
    "softmax_backward": "softmax_backward",
    "head_backward": "attention_head_backward",
    "sgd": "sgd_step",
    "train": "train",
}

# Outputs a message must not call right: the mutant's mistake makes them wrong, though a small input can hide it.
NOT_RIGHT = {
    "training__head_backward_d_k_untransposed": "d_w_k",
    "training__head_backward_d_v_untransposed": "d_w_v",
}
CALLED_RIGHT = re.compile(r"(?:and|;) ([\w, ]+) (?:is|are) right")


def test_enough_mutants():
    """At least 30 wrong implementations over every exercise and 8 correct alternatives."""
    assert len(WRONG) >= 30 and len(RIGHT) >= 8
    assert {exercise_of(m) for m in WRONG} == set(NAMES)


@pytest.mark.slow
def test_reference_passes_everything():
    """The reference solutions pass every check with full points, on the student's profile."""
    report = run_checks(SOLUTIONS_DIR)
    failing = [
        (c.id, c.message) for e in report.exercises for c in e.checks if c.status != "passed"
    ]
    assert failing == []
    assert report.passed and report.points == report.max_points == 100.0
    assert [e.name for e in report.exercises] == list(NAMES)


@pytest.mark.slow
def test_stubs_are_not_started(tmp_path):
    """The untouched stubs are "not_started" everywhere, never "failed", with no points."""
    report = run_checks(write_stubs(tmp_path / "stubs"), profile="quick")
    assert {e.name: e.status for e in report.exercises} == dict.fromkeys(NAMES, "not_started")
    assert report.points == 0.0
    assert all(
        c.status == "not_started" and "NotImplementedError" in c.message
        for e in report.exercises
        for c in e.checks
    )


@pytest.mark.slow
@pytest.mark.parametrize("mutant", WRONG, ids=lambda m: m.stem)
def test_wrong_implementation_fails(verdicts, mutant):
    """A known mistake fails its exercise, with a message of at most 25 lines for every failed check."""
    result = verdicts[mutant.stem]
    assert result["status"] == "failed", result
    failed = [c for c in result["checks"] if c["status"] != "passed"]
    assert failed and all(c["status"] == "failed" and c["message"] for c in failed)
    assert {
        c["id"]: len(c["message"].splitlines())
        for c in failed
        if len(c["message"].splitlines()) > 25
    } == {}  # one failure, one screen
    assert result["points"] < result["max_points"]
    if mutant.stem in NAMED:
        assert any(NAMED[mutant.stem] in c["message"] for c in failed), failed


@pytest.mark.slow
def test_a_named_mistake_is_what_the_code_does(verdicts, tmp_path):
    """Every known mistake a mutant's report names gives the mutant's own output on a general input and on drawn ones.

    Where a message names several as alike on every input that failed, the mutant's mistake is one of them.
    """
    replays = []
    for mutant in WRONG:
        said = [
            names
            for c in verdicts[mutant.stem]["checks"]
            for names in replayed.namings(c["message"])
        ]
        module = replayed.mutant_module(mutant, tmp_path) if said else None
        for names in said:
            found = {name: replayed.code(name) for name in names}
            assert None not in found.values(), (mutant.stem, names)  # a name with no code to replay
            true = [
                name
                for name, (function, code) in found.items()
                if replayed.is_what_it_does(function, code, getattr(module, function))
            ]
            assert true == names if len(names) == 1 else true, (mutant.stem, names, true)
            replays.append((mutant.stem, names))
    assert len({stem for stem, _ in replays}) >= 15, replays


@pytest.mark.slow
@pytest.mark.parametrize(
    "mutant", [m for m in WRONG if exercise_of(m) == "training"], ids=lambda m: m.stem
)
def test_training_mistake_counts_once(verdicts, mutant):
    """A wrong function in training fails only its own share: every failing verdict is against it, since the others use the reference."""
    what = mutant.stem.split("__")[1]
    own = next(function for prefix, function in OWN_FUNCTION.items() if what.startswith(prefix))
    failing = {
        function
        for c in verdicts[mutant.stem]["checks"]
        for function, told in c["functions"].items()
        if told != "passed"
    }
    assert failing == {own}, [
        (c["id"], c["functions"])
        for c in verdicts[mutant.stem]["checks"]
        if c["status"] != "passed"
    ]
    earned = verdicts[mutant.stem]["functions"]
    assert all(
        e["points"] == e["max_points"] for function, e in earned.items() if function != own
    ), earned


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(NOT_RIGHT), ids=str)
def test_an_output_the_mistake_makes_wrong_is_never_called_right(verdicts, mutant):
    """On a one-column input a wrong d_k gives the right d_w_k; the message does not call it right, since larger inputs showed it wrong."""
    said = [
        name.strip()
        for c in verdicts[mutant]["checks"]
        for found in CALLED_RIGHT.findall(c["message"])
        for name in found.split(",")
    ]
    assert said and NOT_RIGHT[mutant] not in said, said


@pytest.mark.slow
@pytest.mark.parametrize("mutant", RIGHT, ids=lambda m: m.stem)
def test_correct_alternative_passes(verdicts, mutant):
    """A correct implementation in another style passes every check."""
    result = verdicts["right/" + mutant.stem]
    assert result["status"] == "passed", [c for c in result["checks"] if c["status"] != "passed"]
    assert result["points"] == result["max_points"]


@pytest.mark.slow
def test_right_values_with_a_warning_fail_only_the_warning_check(verdicts):
    """exp before the shift, with its NaNs replaced afterwards, fails the warning check alone."""
    checks = verdicts["softmax__warns_then_fixes"]["checks"]
    assert [c["id"] for c in checks if c["status"] != "passed"] == [
        "softmax.no_warnings_on_extreme_inputs"
    ]


def test_checks_call_only_their_own_module():
    """Each check file calls its exercise's module, and a public one also the exercises it builds on.

    Those are the reference in the full kit (so a mutant there fails no other exercise) and the
    student's own in the student's kit, where the forward pass of a finite difference needs them.
    """
    for name in NAMES:
        for kind, allowed in (("hidden", {name}), ("public", {name, *BY_NAME[name].uses})):
            source = (CHECKS_DIR / kind / f"test_{name}.py").read_text(encoding="utf-8")
            called = set(re.findall(r'submission\.call\(\s*"(\w+)"', source))
            assert called <= allowed and (kind == "hidden" or name in called), (kind, name, called)
    # training's finite differences
    assert {m for m in BY_NAME["training"].uses} == {"scores", "masking", "softmax"}


@pytest.mark.slow
@pytest.mark.parametrize("mutant", WRONG, ids=lambda m: m.stem)
def test_wrong_implementation_fails_publicly(verdicts, mutant):
    """A known mistake fails a public check too, so the student's kit shows it (PUBLIC_MISSES lists those it does not)."""
    checks = verdicts[mutant.stem]["checks"]
    failed_publicly = any(c["public"] and c["status"] != "passed" for c in checks)
    assert failed_publicly == (mutant.stem not in PUBLIC_MISSES), [
        c["id"] for c in checks if c["status"] != "passed"
    ]
    assert (
        verdicts[mutant.stem]["public"]["checks"] > 0
        and verdicts[mutant.stem]["hidden"]["checks"] > 0
    )


@pytest.mark.slow
def test_check_ids_are_unique_and_either_public_or_hidden():
    """No check id is in both folders, so every id names one check and says where it lives."""
    report = run_checks(SOLUTIONS_DIR, profile="quick")
    for exercise in report.exercises:
        ids = [c.id for c in exercise.checks]
        assert (
            len(ids) == len(set(ids))
            and exercise.counts(True)[1] >= 4
            and exercise.counts(False)[1] >= 1
        ), ids
        # public first
        assert [c.public for c in exercise.checks] == sorted(
            (c.public for c in exercise.checks), reverse=True
        )


def test_later_exercises_use_the_reference_of_earlier_ones():
    """heads and training run with every function of scores, masking and softmax from the reference."""
    earlier = {
        "scores.attention_scores",
        "masking.causal_mask",
        "masking.apply_causal_mask",
        "softmax.softmax",
    }
    assert reference_functions("heads") == reference_functions("training") == earlier
    assert all(reference_functions(name) == set() for name in ("scores", "masking", "softmax"))


@pytest.mark.slow
def test_root_cause_named_when_earlier_exercises_fail(tmp_path):
    """With wrong scores, masking and softmax, heads and training still pass and name the root cause."""
    mutants = [
        MUTANTS / "wrong" / f"{m}.py"
        for m in ("scores__no_scale", "masking__fills_zero", "softmax__no_max_shift")
    ]
    report = run_checks(submission_with(tmp_path / "sub", *mutants), profile="quick")
    status = {e.name: e.status for e in report.exercises}
    assert status == {
        "scores": "failed",
        "masking": "failed",
        "softmax": "failed",
        "heads": "passed",
        "training": "passed",
    }
    heads = report.exercises[3]
    assert heads.note.startswith(
        "heads uses your scores, your masking and your softmax, which fail their checks"
    )
    assert "passes with the reference" in heads.note


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(AT_SCALE_ONLY), ids=str)
def test_mistakes_at_the_comparison_s_sizes_fail_there(verdicts, mutant):
    """Code right on small inputs and wrong at the sizes `grader compare` uses fails a check run at those sizes.

    (The worked examples and the comparison's own calls are at those sizes too.)
    """
    failed = [c for c in verdicts[mutant]["checks"] if c["status"] != "passed"]
    at_scale = [c for c in failed if c["message"].startswith(SAID)]
    assert at_scale and all(
        c in at_scale or c["id"].endswith(("worked_examples", "as_the_comparison_calls_it"))
        for c in failed
    ), failed


@pytest.mark.slow
def test_a_mistake_fails_its_own_exercise_only(tmp_path):
    """The variants a student tester wrote, and one only the comparison's sizes show, fail their own exercise and no other.

    (The mutant matrix checks each mutant's own exercise; this checks the others too, for a few.)
    """
    mutants = [
        "masking__block_size_8",
        "softmax__epsilon_below",
        "training__train_zip",
        "heads__mask_block_128",
    ]
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        reports = list(
            pool.map(
                every_exercise_of,
                [MUTANTS / "wrong" / f"{m}.py" for m in mutants],
                [tmp_path] * len(mutants),
            )
        )
    for mutant, statuses in zip(mutants, reports):
        assert statuses == {
            name: "failed" if name == exercise_of(Path(mutant)) else "passed" for name in NAMES
        }, mutant


def every_exercise_of(mutant: Path, scratch: Path) -> dict:
    """Each exercise's status for a copy of the reference with this mutant in place (run in a pool process)."""
    report = run_checks(submission_with(scratch / mutant.stem, mutant), profile="quick")
    return {e.name: e.status for e in report.exercises}
