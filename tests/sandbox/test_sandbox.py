"""The worker boundary: values cross intact, failures come back as StudentError of the right kind."""

import time

import numpy as np
import pytest
from busy import allowed
from folders import submission

from grader.paths import SOLUTIONS_DIR
from grader.sandbox.errors import StudentError
from grader.sandbox.guard import refusals
from grader.sandbox.handle import StudentCode, _as_sent, _checked
from grader.sandbox.submission import SubmissionError, find_submission
from grader.sandbox.worker.codec import (
    MAX_WARNINGS,
    WARNING_CHARS,
    Batches,
    Foreign,
    ToyModel,
    decode,
    encode,
)
from grader.sandbox.worker.toymodel import BatchFeed, LinearModel
from solutions.heads import attention_head
from solutions.softmax import softmax
from solutions.training import train


def head_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(2, 4, 3)),
        rng.normal(size=(3, 2)),
        rng.normal(size=(3, 2)),
        rng.normal(size=(3, 5)),
    )


@pytest.mark.parametrize(
    "value",
    [
        np.arange(6.0).reshape(2, 3),
        np.arange(6).reshape(2, 3).T,  # not C-contiguous
        np.zeros((0, 3)),
        np.array(2.5),
        np.float32(1.5),
        np.int64(-3),
        np.array([True, False]),
        np.array([1 + 2j]),
        np.array([np.nan, np.inf, -np.inf]),
    ],
)
def test_arrays_and_numpy_scalars_cross_exactly(value):
    back = decode(encode(value))
    assert type(back) is type(value)
    assert back.dtype == value.dtype and np.shape(back) == np.shape(value)
    np.testing.assert_array_equal(back, value)


def test_containers_and_python_scalars_cross_exactly():
    value = {"a": [1, 2.5, True, None, "s", (np.ones(2), float("nan"))], 3: {"x": ()}}
    back = decode(encode(value))
    assert back.keys() == value.keys() and type(back["a"][5]) is tuple
    assert [type(v) for v in back["a"][:5]] == [int, float, bool, type(None), str]
    assert np.isnan(back["a"][5][1])


class Liar(float):
    def __eq__(self, other):
        return True


@pytest.mark.parametrize(
    "value, type_name",
    [
        (np.array([1, "a"], dtype=object), "numpy.ndarray with dtype object"),
        (np.ones(2).view(np.matrix), "numpy.matrix"),
        (Liar(1.0), "test_sandbox.Liar"),
        (range(3), "range"),
        ({(1, 2): 3}, "dict"),
    ],
)
def test_other_values_come_back_as_foreign(value, type_name):
    back = decode(encode(value))
    assert type(back) is Foreign and back.type_name == type_name


def test_decode_refuses_pickled_arrays():
    bad = encode(np.ones(2)).replace(b"'<f8'", b"'|O8'")
    with pytest.raises(ValueError):
        decode(bad)


def test_live_decode_gives_working_toy_model_and_feed():
    pairs = [(np.ones((2, 3)), np.zeros((2, 1)))] * 2
    model, feed = decode(
        encode((ToyModel({"w": np.zeros((3, 1)), "b": np.zeros(1)}), Batches(pairs))), live=True
    )
    assert type(model) is LinearModel and type(feed) is BatchFeed
    loss, grads = model.loss_and_grads(*next(feed))
    assert loss == 0.0 and grads["w"].shape == (3, 1) and feed.taken == 1


def test_reference_solutions_return_the_reference_values():
    x, w_q, w_k, w_v = head_inputs()
    with StudentCode(SOLUTIONS_DIR) as student:
        outcome = student.call("heads", "attention_head", x, w_q, w_k, w_v)
    out, shares = outcome.value
    expected_out, expected_shares = attention_head(x, w_q, w_k, w_v)
    np.testing.assert_array_equal(out, expected_out)
    np.testing.assert_array_equal(shares, expected_shares)
    np.testing.assert_array_equal(outcome.args[0], x)
    assert outcome.seconds >= 0 and outcome.output == ""


def test_a_stub_is_not_started(pristine):
    with StudentCode(pristine) as student, pytest.raises(StudentError) as caught:
        student.call("softmax", "softmax", np.zeros(3))
    assert caught.value.kind == "not_started" and "NotImplementedError" in caught.value.message


def test_printed_output_is_captured_not_mixed_into_the_protocol(tmp_path):
    folder = submission(
        tmp_path,
        scores="""
        import sys
        def attention_scores(q, k):
            print("hello from scores")
            print("warning", file=sys.stderr)
            return q @ k.swapaxes(-1, -2) / q.shape[-1] ** 0.5
        """,
    )
    with StudentCode(folder) as student:
        outcome = student.call("scores", "attention_scores", np.ones((2, 4)), np.ones((3, 4)))
    np.testing.assert_allclose(outcome.value, np.full((2, 3), 2.0))
    assert "hello from scores" in outcome.output and "warning" in outcome.output


def test_every_call_sends_back_its_warnings_even_if_a_module_silenced_them_at_import(tmp_path):
    folder = submission(
        tmp_path,
        scores="""
        import warnings
        import numpy as np
        np.seterr(all="ignore")
        warnings.filterwarnings("ignore")
        def attention_scores(q, k):
            return q @ k.swapaxes(-1, -2) / q.shape[-1] ** 0.5
        """,
        softmax="""
        import numpy as np
        def softmax(x):
            e = np.exp(x)
            return e / e.sum(axis=-1, keepdims=True)
        """,
    )
    x = np.array([1e4, 0.0])
    with StudentCode(folder) as student:
        student.call("scores", "attention_scores", np.ones((2, 4)), np.ones((3, 4)))
        outcomes = [student.call("softmax", "softmax", x) for _ in range(2)]
        quiet = student.call("softmax", "softmax", np.zeros(2))
    expected = (
        "RuntimeWarning: overflow encountered in exp",
        "RuntimeWarning: invalid value encountered in divide",
    )
    assert [o.warnings for o in outcomes] == [expected, expected]  # every time, not only the first
    assert quiet.warnings == () and all(o.output == "" for o in outcomes)


def test_a_call_may_silence_its_own_warnings_and_the_reference_gives_none(tmp_path):
    folder = submission(
        tmp_path,
        scores="""
        import numpy as np
        def attention_scores(q, k):
            with np.errstate(all="ignore"):
                return np.exp(q @ k.swapaxes(-1, -2) * 1e3)
        """,
    )
    x = np.array([[1e4, -1e4, -np.inf], [-1e4, -np.inf, -1e4 + 1]])
    with StudentCode(folder) as student:
        assert (
            student.call("scores", "attention_scores", np.ones((2, 4)), np.ones((3, 4))).warnings
            == ()
        )
        assert student.call("softmax", "softmax", x).warnings == ()


def test_warnings_are_capped_in_number_and_length(tmp_path):
    folder = submission(
        tmp_path,
        softmax="""
        import warnings
        def softmax(x):
            for i in range(50):
                warnings.warn(f"{i} " + "w" * 1000, UserWarning)
            return x
        """,
    )
    with StudentCode(folder) as student:
        caught = student.call("softmax", "softmax", np.zeros(2)).warnings
    assert len(caught) == MAX_WARNINGS and all(len(w) == WARNING_CHARS for w in caught)
    assert caught[0].startswith("UserWarning: 0 www") and caught[-1].startswith(
        f"UserWarning: {MAX_WARNINGS - 1} w"
    )


def test_an_exception_names_the_students_file_and_line(tmp_path):
    folder = submission(
        tmp_path,
        scores="""
        def attention_scores(q, k):
            return q @ k
        """,
    )
    with StudentCode(folder) as student, pytest.raises(StudentError) as caught:
        student.call("scores", "attention_scores", np.ones((2, 4)), np.ones((3, 4)))
    assert caught.value.kind == "raised"
    assert (
        "ValueError" in caught.value.message
        and "scores.py, line 3: return q @ k" in caught.value.message
    )


def test_a_syntax_error_in_a_module_imported_is_named_where_it_is(tmp_path):
    folder = submission(
        tmp_path,
        masking="""
        def causal_mask(T)
            return T
        """,
        heads="""
        from .masking import causal_mask


        def attention_head(x, w_q, w_k, w_v):
            return x
        """,
    )
    with StudentCode(folder) as student, pytest.raises(StudentError) as caught:
        student.call(
            "heads",
            "attention_head",
            np.ones((2, 2)),
            np.ones((2, 2)),
            np.ones((2, 2)),
            np.ones((2, 2)),
        )
    assert caught.value.kind == "import"
    assert caught.value.message.startswith(
        "your heads.py cannot be imported: masking.py, which it imports, has a syntax error: "
    )
    assert caught.value.message.endswith(
        "(masking.py, line 2). Fix the syntax in masking.py and save."
    )


WRONG_SOFTMAX = """
    import numpy as np
    def softmax(x):
        return np.zeros_like(x)
    """


@pytest.mark.slow
def test_a_stand_in_replaces_a_function_everywhere_it_is_bound(tmp_path):
    folder = submission(tmp_path, softmax=WRONG_SOFTMAX)
    x, w_q, w_k, w_v = head_inputs()
    expected = attention_head(x, w_q, w_k, w_v)[0]
    with StudentCode(folder) as student:
        assert not np.allclose(
            student.call("heads", "attention_head", x, w_q, w_k, w_v).value[0], expected
        )
    with StudentCode(folder, reference={"softmax.softmax": softmax}) as student:
        np.testing.assert_allclose(
            student.call("heads", "attention_head", x, w_q, w_k, w_v).value[0], expected
        )
        np.testing.assert_array_equal(
            student.call("softmax", "softmax", np.ones(2)).value, [0.5, 0.5]
        )


@pytest.mark.slow
def test_a_stand_in_serves_a_module_that_cannot_be_imported(tmp_path):
    folder = submission(tmp_path, softmax="def softmax(x:\n")
    x, w_q, w_k, w_v = head_inputs()
    with StudentCode(folder, reference={"softmax.softmax": softmax}) as student:
        out = student.call("heads", "attention_head", x, w_q, w_k, w_v).value[0]
    np.testing.assert_allclose(out, attention_head(x, w_q, w_k, w_v)[0])
    with StudentCode(folder) as student, pytest.raises(StudentError) as caught:
        student.call("heads", "attention_head", x, w_q, w_k, w_v)
    assert caught.value.kind == "import" and "softmax.py" in caught.value.message


def test_train_sends_back_the_model_params_and_how_many_batches_were_taken():
    rng = np.random.default_rng(1)
    pairs = [(rng.normal(size=(5, 3)), rng.normal(size=(5, 2))) for _ in range(6)]
    params = {"w": np.zeros((3, 2)), "b": np.zeros(2)}
    with StudentCode(SOLUTIONS_DIR) as student:
        outcome = student.call("training", "train", ToyModel(params), Batches(pairs), 4, 0.1)
    model, batches = outcome.args[0], outcome.args[1]
    reference = LinearModel({name: p.copy() for name, p in params.items()})
    assert outcome.value == train(reference, iter(pairs), 4, 0.1)
    assert type(model) is ToyModel and type(batches) is Batches and batches.taken == 4
    np.testing.assert_array_equal(model.params["w"], reference.params["w"])
    np.testing.assert_array_equal(params["w"], 0.0)  # the parent's copy is untouched


def test_an_in_place_update_shows_in_the_args(tmp_path):
    folder = submission(
        tmp_path,
        training=(SOLUTIONS_DIR / "training.py")
        .read_text()
        .replace(
            "params[name] = params[name] - lr * grads[name]", "params[name] -= lr * grads[name]"
        ),
    )
    with StudentCode(folder) as student:
        outcome = student.call("training", "sgd_step", {"w": np.ones(2)}, {"w": np.ones(2)}, 0.5)
    assert outcome.value is None
    np.testing.assert_array_equal(outcome.args[0]["w"], [0.5, 0.5])


WRITES_ONE = """
    import numpy as np
    def softmax(x):
        value = np.exp(x - x.max(axis=-1, keepdims=True))
        if x.shape[-1] > 200:
            x[0, -1] = 7.0
        return value / value.sum(axis=-1, keepdims=True)
    """


def test_a_large_argument_left_alone_comes_back_as_sent_and_one_changed_by_a_single_entry_as_changed(
    tmp_path,
):
    """Large arrays a call leaves alone are not sent back (the grader copies its own), but a change of one entry shows."""
    x = np.full((300, 300), np.nan)  # NaN: unchanged means the same bytes, not equal values
    x[:, :150] = 1.0
    with StudentCode(submission(tmp_path, softmax=WRITES_ONE)) as student:
        # 100 columns: 234 KiB, over the size sent as None
        alone = student.call("softmax", "softmax", x[:, :100].copy())
        changed = student.call("softmax", "softmax", x)
    assert (
        alone.args[0] is not x
        and alone.args[0].shape == (300, 100)
        and np.array_equal(alone.args[0], x[:, :100])
    )
    assert changed.args[0][0, -1] == 7.0 and np.isnan(changed.args[0][1, -1]) and np.isnan(x[0, -1])


@pytest.mark.parametrize("same", [[1], [0, 0.5], "0", [True], [-1]])
def test_a_reply_that_claims_an_argument_unchanged_wrongly_is_refused(same):
    """Only positions of arguments sent back as None may be said to be unchanged."""
    with pytest.raises(ValueError, match="unchanged"):
        _checked(
            {"value": 1, "args": (None,), "same": same, "seconds": 0.1, "warnings": ()}, "call"
        )
    assert _as_sent((np.ones(3), {"w": 1}), 1) is None and _as_sent((np.ones(3),), 4) is None


@pytest.mark.slow
def test_a_timeout_costs_one_call_and_a_fresh_worker_serves_the_next(tmp_path):
    folder = submission(
        tmp_path,
        scores="""
        import numpy as np
        def attention_scores(q, k):
            if q.shape[0] == 1:
                while True:
                    pass
            return q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        """,
    )
    with StudentCode(folder, timeout=1) as student:
        start = time.monotonic()
        with pytest.raises(StudentError) as caught:
            student.call("scores", "attention_scores", np.ones((1, 2)), np.ones((1, 2)))
        assert time.monotonic() - start < allowed(5)
        assert (
            caught.value.kind == "timeout"
            and "attention_scores did not return within 1 s" in caught.value.message
        )
        assert student.call(
            "scores", "attention_scores", np.ones((2, 2)), np.ones((2, 2))
        ).value.shape == (2, 2)


def test_a_numpy_py_in_the_folder_does_not_shadow_numpy(tmp_path):
    folder = submission(tmp_path)
    (folder / "numpy.py").write_text("raise SystemExit('shadowed')\n")
    with StudentCode(folder) as student:
        outcome = student.call("softmax", "softmax", np.zeros(2))
    np.testing.assert_array_equal(outcome.value, [0.5, 0.5])


def test_importing_the_solutions_is_refused_statically(tmp_path):
    folder = submission(tmp_path, softmax="from solutions.softmax import softmax\n")
    with StudentCode(folder) as student:
        for module in ("softmax", "heads"):  # heads imports softmax
            with pytest.raises(StudentError) as caught:
                student.call(
                    module, "softmax" if module == "softmax" else "attention_head", np.zeros(2)
                )
            assert (
                caught.value.kind == "refused"
                and "softmax.py imports the reference solutions (line 1)" in caught.value.message
            )
        assert student.call(
            "scores", "attention_scores", np.ones((1, 2)), np.ones((1, 2))
        ).value.shape == (1, 1)


def test_the_folders_refusals_are_found_again_once_a_file_changes(tmp_path):
    """Workers of one folder share its parse, kept by the files' contents: an edit is read afresh, both ways."""
    folder = submission(tmp_path)
    assert refusals(folder) == {}
    (folder / "masking.py").write_text("import solutions.masking\n")
    assert "masking.py imports the reference solutions (line 1)" in refusals(folder)["masking"]
    (folder / "masking.py").write_text((SOLUTIONS_DIR / "masking.py").read_text())
    assert refusals(folder) == {}


def test_importing_the_solutions_is_refused_at_run_time(tmp_path):
    folder = submission(
        tmp_path,
        softmax="""
        import importlib
        def softmax(x):
            return getattr(importlib, "import_" + "module")("sol" + "utions.softmax").softmax(x)
        """,
    )
    with StudentCode(folder) as student, pytest.raises(StudentError) as caught:
        student.call("softmax", "softmax", np.zeros(2))
    assert caught.value.kind == "refused"


@pytest.mark.slow
def test_small_calls_cost_the_grader_a_few_milliseconds_of_cpu_at_most():
    """A guard against waiting by polling, not a speed target (bench/ measures those): a call costs the grader's
    own process 0.8-1.1 ms of CPU on the 2-core VM (measured today), depending on how fast the machine runs that hour."""
    x = np.ones((4, 3))
    with StudentCode(SOLUTIONS_DIR) as student:
        student.call("scores", "attention_scores", x, x)
        start = time.process_time()
        for _ in range(300):
            student.call("scores", "attention_scores", x, x)
        assert (time.process_time() - start) / 300 < 0.004  # the parent's own CPU time per call


def test_find_submission_says_what_is_missing(tmp_path):
    assert find_submission(None, solutions=True) == SOLUTIONS_DIR
    folder = submission(tmp_path)
    assert find_submission(folder, solutions=False) == folder.resolve()
    (folder / "heads.py").unlink()
    with pytest.raises(SubmissionError, match="has no heads.py"):
        find_submission(folder, solutions=False)
    with pytest.raises(SubmissionError, match="does not exist"):
        find_submission(tmp_path / "nowhere", solutions=False)
    with pytest.raises(SubmissionError, match="name two different folders: give one of them"):
        find_submission(folder, solutions=True)


def test_a_workers_room_holds_the_worker_package_whole_and_nothing_else_of_the_kit():
    from grader.sandbox.private import WORKER_DIR, Room

    room = Room(SOLUTIONS_DIR)
    try:
        held = sorted(
            p.relative_to(room.kit).as_posix() for p in room.kit.rglob("*") if p.is_file()
        )
        expected = sorted(
            f"grader/sandbox/worker/{p.relative_to(WORKER_DIR).as_posix()}"
            for p in WORKER_DIR.rglob("*.py")
        )
        assert held == sorted(["grader/__init__.py", "grader/sandbox/__init__.py", *expected])
        assert all((room.kit / name).stat().st_mode & 0o777 == 0o644 for name in held)
    finally:
        room.remove()
