"""Points that follow the work: every check says which function it judges, and each function earns its share by its own checks."""

import dataclasses
import re
import shutil
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.check import collector
from grader.check.checks.judged import ROLES, declared
from grader.check.results import CheckResult, function_points, partial_points
from grader.check.runner import run_checks
from grader.exercises import BY_NAME, EXERCISES, NAMES, Exercise
from grader.paths import SOLUTIONS_DIR

MUTANTS = Path(__file__).resolve().parents[1] / "mutants"
STATUSES = ("passed", "failed", "not_started", "error")


def every_check():
    """(exercise, kind, check) for every check of every check file, as the grader runs them."""
    for name in NAMES:
        for kind in ("public", "hidden"):
            for check in collector._checks(collector._imported(kind, name)):
                yield name, kind, check


def test_every_check_declares_the_functions_it_judges():
    """@judges above every check, naming functions of its own exercise, with a known role."""
    missing = [
        f"{kind}/test_{name}.py::{check.__name__}"
        for name, kind, check in every_check()
        if declared(check) is None
    ]
    assert missing == [], "add @judges(...) above these checks (grader.check.checks.judged)"
    for name, kind, check in every_check():
        judged = declared(check)
        assert judged.functions and set(judged.functions) <= set(BY_NAME[name].functions), (
            kind,
            check.__name__,
            judged,
        )
        assert judged.role in ROLES and (judged.role != "defining" or len(judged.functions) == 1), (
            kind,
            check.__name__,
        )


@pytest.mark.slow
def test_a_check_calls_the_functions_it_declares():
    """On the reference every check passes, counts for exactly the functions it declares, and calls each of them."""
    for exercise in run_checks(SOLUTIONS_DIR, profile="quick").exercises:
        for check in exercise.checks:
            assert check.status == "passed" and set(check.functions.values()) == {"passed"}, (
                check.id
            )
            assert set(check.functions) <= set(check.calls), (
                check.id,
                check.functions,
                check.calls,
            )
        assert all(
            earned["points"] == earned["max_points"] for earned in exercise.functions.values()
        )


def test_every_function_has_a_public_check_of_what_it_computes():
    """Each function can earn its share in both kits: a public check that is not a guard judges it."""
    judged = {
        f
        for _, kind, check in every_check()
        if kind == "public" and declared(check).role != "guard"
        for f in declared(check).functions
    }
    assert judged == {f for exercise in EXERCISES for f in exercise.functions}


def test_the_shares_give_each_exercise_its_points():
    assert all(sum(e.shares) == e.points and len(e.shares) == len(e.functions) for e in EXERCISES)
    with pytest.raises(ValueError, match="shares"):
        Exercise("x", "x", 10.0, ("a", "b"), (5.0, 4.0))


ROLE = st.sampled_from(ROLES)


@st.composite
def verdicts(draw, exercise: Exercise):
    """Checks of an exercise, each judging one of its functions (or several, as a guard), with any status."""
    checks = []
    for n in range(draw(st.integers(0, 12))):
        functions = draw(
            st.lists(st.sampled_from(exercise.functions), min_size=1, max_size=2, unique=True)
        )
        status = draw(st.sampled_from(STATUSES))
        role = "guard" if len(functions) > 1 else draw(ROLE)
        told = dict.fromkeys(functions, "passed") if status == "passed" else {functions[0]: status}
        checks.append(CheckResult(f"{exercise.name}.c{n}", status, functions=told, role=role))
    return checks


EXERCISE = st.sampled_from(EXERCISES)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_a_function_earns_its_share_by_its_own_checks(data):
    """At most its share, in half points; all of it when all its checks pass; none with no passing check of what it
    computes or a failing defining one; and its points do not move when another function's verdicts change."""
    exercise = data.draw(EXERCISE)
    checks = data.draw(verdicts(exercise))
    found = function_points(exercise, checks)
    for function, earned in found.items():
        mine = [(c.role, c.functions[function]) for c in checks if function in c.functions]
        share = exercise.share(function)
        assert 0 <= earned["points"] <= share and (2 * earned["points"]).is_integer()
        assert (earned["passed"], earned["checks"]) == (
            sum(t == "passed" for _, t in mine),
            len(mine),
        )
        if mine and all(t == "passed" for _, t in mine) and any(r != "guard" for r, _ in mine):
            assert earned["points"] == share
        if not any(t == "passed" for r, t in mine if r != "guard") or any(
            t != "passed" for r, t in mine if r == "defining"
        ):
            assert earned["points"] == 0
        others = [
            dataclasses.replace(c, functions={f: "failed" for f in c.functions})
            if function not in c.functions
            else c
            for c in checks
        ]
        # the same work, whatever the other functions do
        assert function_points(exercise, others)[function] == earned
    assert partial_points(exercise, checks) == (
        exercise.points
        if checks and all(c.status == "passed" for c in checks)
        else sum(e["points"] for e in found.values())
    )


def test_a_failure_that_comes_from_an_earlier_function_counts_for_it_only_when_its_own_checks_pass():
    """apply_causal_mask passes a check with the reference causal_mask standing in: the check is causal_mask's when nothing else is."""
    masking = BY_NAME["masking"]
    own = [
        CheckResult(f"masking.m{n}", "passed", functions={"causal_mask": "passed"})
        for n in range(3)
    ]
    apply = [
        CheckResult(f"masking.a{n}", "passed", functions={"apply_causal_mask": "passed"})
        for n in range(3)
    ]
    caused = CheckResult(
        "masking.a3", "failed", functions={"apply_causal_mask": "passed", "causal_mask": "failed"}
    )
    # 5 × 3/4: its own checks miss it
    assert function_points(masking, own + apply + [caused])["causal_mask"]["points"] == 3.5
    assert function_points(masking, own + apply + [caused])["apply_causal_mask"]["points"] == 10.0
    failing = [
        dataclasses.replace(own[0], status="failed", functions={"causal_mask": "failed"}),
        *own[1:],
    ]
    alone, shared = (
        function_points(masking, failing + apply),
        function_points(masking, failing + apply + [caused]),
    )
    # its own checks judge it, whoever calls it
    assert alone["causal_mask"]["points"] == shared["causal_mask"]["points"] == 3.0


def variant(
    folder: Path, module: str, function: str, body: str, also: tuple[tuple[str, str], ...] = ()
) -> Path:
    """A copy of the reference with one function's body replaced (and other text replaced in that module)."""
    folder.mkdir(parents=True)
    for path in SOLUTIONS_DIR.glob("*.py"):
        shutil.copy(path, folder)
    path = folder / f"{module}.py"
    text = re.sub(
        rf"(def {function}\(.*?\):\n)(.*?)(?=\n\n\ndef |\Z)",
        lambda m: m.group(1) + body,
        path.read_text(),
        flags=re.S,
    )
    for old, new in also:
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)
    return folder


def changed(folder: Path) -> set[str]:
    """The modules of a folder that differ from the reference's."""
    return {
        p.name
        for p in folder.glob("*.py")
        if p.read_bytes() != (SOLUTIONS_DIR / p.name).read_bytes()
    }


def points_of(case: str, scratch: Path) -> tuple[float, dict]:
    """The points of a case's exercise and of each of its functions (run in a pool process)."""
    stub = '    raise NotImplementedError("{}")\n'
    off_by_one = "    return np.tril(np.ones((T, T), dtype=bool), 1)  # also the next position\n"
    own_apply = (
        "np.where(causal_mask(T), scores, -np.inf)",
        "np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, scores)",
    )
    folder = scratch / case
    made = {
        "train stub": lambda: variant(folder, "training", "train", stub.format("train")),
        "sgd_step pass": lambda: variant(folder, "training", "sgd_step", "    pass\n"),
        "sgd_step climbs": lambda: variant(
            folder,
            "training",
            "sgd_step",
            "    for name in params:\n        params[name] = params[name] + lr * grads[name]\n",
        ),
        "multi_head_attention stub": lambda: variant(
            folder, "heads", "multi_head_attention", stub.format("multi_head_attention")
        ),
        "apply_causal_mask stub": lambda: variant(
            folder, "masking", "apply_causal_mask", stub.format("apply_causal_mask")
        ),
        "off-by-one mask, used by apply": lambda: variant(
            folder, "masking", "causal_mask", off_by_one
        ),
        "off-by-one mask, apply on its own": lambda: variant(
            folder, "masking", "causal_mask", off_by_one, (own_apply,)
        ),
    }[case]()
    exercise = next(
        name for name in ("training", "heads", "masking") if f"{name}.py" in changed(made)
    )
    result = run_checks(made, [exercise], profile="quick").exercises[0]
    return result.points, {name: earned["points"] for name, earned in result.functions.items()}


POINTS = {  # each case: the exercise's points, and the function that loses its share
    "train stub": 22.0,  # 30 - train's 8
    "sgd_step pass": 26.0,  # 30 - sgd_step's 4
    "sgd_step climbs": 26.0,
    "multi_head_attention stub": 12.0,  # 20 - its 8
    "apply_causal_mask stub": 5.0,  # 15 - its 10
    "off-by-one mask, used by apply": 10.0,  # 15 - causal_mask's 5, either way
    "off-by-one mask, apply on its own": 10.0,
}


@pytest.mark.slow
def test_points_follow_the_work(tmp_path):
    """A stub, a pass or a step uphill earns none of its function's share, and a mistake costs the same whatever else the module holds."""
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        found = dict(zip(POINTS, pool.map(points_of, POINTS, [tmp_path] * len(POINTS))))
    assert {case: points for case, (points, _) in found.items()} == POINTS
    assert (
        found["off-by-one mask, used by apply"][1]
        == found["off-by-one mask, apply on its own"][1]
        == {
            "causal_mask": 0.0,
            "apply_causal_mask": 10.0,
        }
    )


def with_head_mistake(root: Path, training_calls_it: bool) -> Path:
    """The reference with attention_head's mask left out; with training_calls_it, the backward pass redoes its forward
    pass through the student's own attention_head, as some students write it."""
    folder = root / "submission"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    forward = "softmax(apply_causal_mask(attention_scores(q, k)))"
    heads = (folder / "heads.py").read_text()
    (folder / "heads.py").write_text(heads.replace(forward, "softmax(attention_scores(q, k))", 1))
    if training_calls_it:
        training = (folder / "training.py").read_text()
        training = training.replace(
            "from .softmax import softmax\n",
            "from .heads import attention_head\nfrom .softmax import softmax\n",
        )
        (folder / "training.py").write_text(
            training.replace(forward, "attention_head(x, w_q, w_k, w_v)[1]", 1)
        )
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("training_calls_it", [False, True])
def test_a_mistake_in_attention_head_costs_its_own_share_only(tmp_path, training_calls_it):
    """multi_head_attention and a training.py that calls the student's attention_head pass with the reference one
    standing in: the mistake is counted once, against attention_head, and said where it shows."""
    report = run_checks(with_head_mistake(tmp_path, training_calls_it), ["heads", "training"])
    heads, training = report.exercises
    assert (
        heads.functions["attention_head"]["points"]
        < heads.functions["attention_head"]["max_points"]
    )
    assert heads.functions["multi_head_attention"]["points"] == BY_NAME["heads"].share(
        "multi_head_attention"
    )
    assert training.points == BY_NAME["training"].points
    said = [c.message for c in training.checks if c.status != "passed"]
    assert all("comes from your heads.py, which your training.py imports" in m for m in said)
    assert bool(said) == training_calls_it
