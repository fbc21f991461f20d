"""What a stand-in may ask the reference: each function's contract, a cost bounded by its answer, and a helper process to run it."""

import csv
import json
import math
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import psutil
import pytest
from attackers import ATTACKS, attack, honest
from commands import batch_command
from folders import submission
from treememory import peak_tree

from grader.check.checks import scale
from grader.check.checks.harness import reference_for, reference_functions
from grader.exercises import BY_NAME
from grader.sandbox import asks
from grader.sandbox.errors import AskRefused
from grader.sandbox.handle import StudentCode
from grader.sandbox.helper import HELPER
from grader.sandbox.worker.codec import decode, encode

CEILING = 512 << 20  # bytes the whole grading's process tree may hold while an attacker is graded
# the honest folder's, beside the attackers
FULL = {name: BY_NAME[name].points for name in ("heads", "training")}


def outline(*args):
    """The arguments as the grader sees an ask: arrays by dtype and shape only."""
    return decode(encode(args), outline=True)


REFUSED = {
    "an int size far over the budget": ("masking.causal_mask", (35000,)),
    "a bool size": ("masking.causal_mask", (True,)),
    "empty widths": ("scores.attention_scores", (np.zeros((20000, 0)), np.zeros((20000, 0)))),
    "broadcast batch axes": (
        "scores.attention_scores",
        (np.zeros((12000, 1, 1, 1)), np.zeros((1, 12000, 1, 1))),
    ),
    "widths that differ": ("scores.attention_scores", (np.zeros((2, 3)), np.zeros((2, 4)))),
    "complex input": ("softmax.softmax", (np.zeros(3, complex),)),
    "an object-free str array": ("softmax.softmax", (np.array(["a", "b"]),)),
    "a list": ("softmax.softmax", ([1.0, 2.0],)),
    "a 0-d array": ("softmax.softmax", (np.float64(1.0),)),
    "non-square scores": ("masking.apply_causal_mask", (np.zeros((2, 3)),)),
    "a str gradient": ("training.sgd_step", ({"w": np.zeros(1)}, {"w": "abc"}, 10**9)),
    "names that differ": ("training.sgd_step", ({"w": np.zeros(1)}, {"v": np.zeros(1)}, 0.1)),
    "a gradient that widens its weight": (
        "training.sgd_step",
        ({"w": np.zeros(1)}, {"w": np.zeros(3)}, 0.1),
    ),
    "too many arguments": ("softmax.softmax", (np.zeros(3), np.zeros(3))),
    "head weights for rows of another width": (
        "heads.attention_head",
        (np.zeros((4, 3)), np.zeros((5, 2)), np.zeros((5, 2)), np.zeros((5, 2))),
    ),
    "query and key weights of other widths": (
        "heads.attention_head",
        (np.zeros((4, 3)), np.zeros((3, 2)), np.zeros((3, 5)), np.zeros((3, 2))),
    ),
    "shares and gradients of other widths": (
        "training.softmax_backward",
        (np.zeros((2, 3)), np.zeros((2, 4))),
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_an_ask_outside_its_contract_is_refused_before_it_runs(case):
    name, args = REFUSED[case]
    with pytest.raises(AskRefused):
        asks.check(name, outline(*args))


def test_the_comparisons_own_calls_are_within_the_budget():
    params, grads, lr = scale.params_and_grads()
    honest_calls = {
        "scores.attention_scores": scale.queries_and_keys(),
        "masking.causal_mask": (scale.T,),
        "masking.apply_causal_mask": (scale.scores(),),
        "softmax.softmax": (scale.masked(),),
        "heads.attention_head": scale.head(),
        "training.softmax_backward": scale.softmax_grads(),
        "training.sgd_step": (params, grads, lr),
    }
    assert set(honest_calls) == set(asks.CONTRACTS)
    for name, args in honest_calls.items():
        asks.check(name, outline(*args))
    assert (asks.BATCH, asks.T) == (scale.BATCH, scale.T)
    assert asks.PARAM_NUMBERS == sum(math.prod(shape) for shape in scale.PARAMS.values())
    assert asks.BUDGET == asks.MARGIN * max(scale.BATCH * scale.T * scale.T, asks.PARAM_NUMBERS)


def test_a_complex_step_softmax_backward_through_the_stand_in_no_longer_passes(tmp_path):
    folder = attack(tmp_path, ATTACKS / "costly_sgd_ask.py", 0)
    shares, d_shares = np.array([[0.2, 0.8]]), np.array([[1.0, -1.0]])
    with StudentCode(
        folder, reference=reference_for(reference_functions("training")), timeout=10
    ) as student:
        with pytest.raises(Exception) as raised:
            student.call("training", "softmax_backward", shares, d_shares)
    assert "complex128" in str(raised.value) and "float" in str(raised.value)


def test_a_refused_ask_fails_the_call_even_when_the_students_code_catches_it(tmp_path):
    folder = attack(tmp_path, ATTACKS / "costly_asks.py", 0)
    x, w = np.ones((1, 2, 3)), np.ones((3, 2))
    with StudentCode(
        folder, reference=reference_for(reference_functions("heads")), timeout=10
    ) as student:
        with pytest.raises(Exception) as raised:
            student.call("heads", "attention_head", x, w, w, w)
    assert "causal_mask" in str(raised.value) and f"{asks.BUDGET:,}" in str(raised.value)


def test_the_reference_runs_in_a_helper_process_not_the_graders(tmp_path):
    folder = submission(tmp_path)
    x, w = np.ones((1, 2, 3)), np.ones((3, 2))
    with StudentCode(
        folder, reference=reference_for(reference_functions("heads")), timeout=10
    ) as student:
        student.call("heads", "attention_head", x, w, w, w)
    helper = HELPER.process
    assert helper is not None and helper.poll() is None
    assert psutil.Process(helper.pid).ppid() == psutil.Process().pid


def test_asks_are_answered_on_the_readers_thread_and_the_helper_started_on_the_calls(
    tmp_path, monkeypatch
):
    """The worker's reader answers an ask itself once the helper runs; a helper is only ever started by the calling
    thread, since it dies with the thread that starts it (the reader's ends with its worker)."""
    folder = submission(tmp_path)
    x, w = np.ones((1, 2, 3)), np.ones((3, 2))
    asked_on, spawned_on = [], []
    real_asked, real_spawn = HELPER._asked, HELPER._spawn
    monkeypatch.setattr(
        HELPER,
        "_asked",
        lambda *args: asked_on.append(threading.current_thread()) or real_asked(*args),
    )
    monkeypatch.setattr(
        HELPER, "_spawn", lambda: spawned_on.append(threading.current_thread()) or real_spawn()
    )
    HELPER.stop()
    HELPER.forget()
    with StudentCode(
        folder, reference=reference_for(reference_functions("heads")), timeout=10
    ) as student:
        first = student.call("heads", "attention_head", x, w, w, w).value
        student.call("heads", "attention_head", 2 * x, w, w, w)
    assert spawned_on == [threading.main_thread()]
    # the reader's try, which leaves a helper not running to the call
    assert asked_on[0] is not threading.main_thread()
    assert asked_on[1] is threading.main_thread()
    assert len(asked_on) > 3 and all(
        thread is not threading.main_thread() for thread in asked_on[2:]
    )
    # alive after the worker's reader has ended
    assert HELPER.process is not None and HELPER.process.poll() is None
    with StudentCode(
        folder, reference=reference_for(reference_functions("heads")), timeout=10
    ) as student:
        assert np.array_equal(student.call("heads", "attention_head", x, w, w, w).value, first)


def test_an_ask_that_came_before_is_answered_as_then_and_forgotten_at_the_end(monkeypatch):
    """The reference is a pure function of the ask: the helper process runs each distinct ask once per run."""
    from solutions.softmax import softmax

    asked = []
    real = HELPER._asked
    monkeypatch.setattr(HELPER, "_asked", lambda *args: asked.append(args) or real(*args))
    HELPER.forget()
    frame = encode({"ask": "softmax.softmax", "args": (np.array([[1.0, 2.0]]),)})
    other = encode({"ask": "softmax.softmax", "args": (np.array([[1.0, 3.0]]),)})
    answers = [HELPER.answer(softmax, f) for f in (frame, frame, other)]
    assert answers[0] == answers[1] != answers[2] and len(asked) == 2
    assert np.allclose(decode(answers[0])["value"], softmax(np.array([[1.0, 2.0]])))
    HELPER.forget()
    HELPER.answer(softmax, frame)
    assert len(asked) == 3 and HELPER.kept


@pytest.mark.slow
@pytest.mark.linux("the attack's asks are measured where RLIMIT_AS holds the helper")
@pytest.mark.parametrize("command", ["check", "batch"])
def test_the_grading_stays_under_its_ceiling_while_an_attacker_asks(tmp_path, command):
    root = tmp_path / "submissions"
    root.mkdir()
    attackers = [
        attack(root, ATTACKS / f"{name}.py", 0) for name in ("costly_asks", "costly_sgd_ask")
    ]
    good = honest(root)[0]
    for folder in (root / "honest_partial",):
        shutil.rmtree(folder)
    folders = (*attackers, good)
    if command == "check":
        check = [sys.executable, "-m", "grader", "check", "heads", "training"]
        argv = [
            [*check, "--submission", str(f), "--json", str(tmp_path / f"{f.name}.json")]
            for f in folders
        ]
    else:
        argv = [batch_command(folders, tmp_path / "g.csv")]
    for line in argv:
        peaks: list = []
        process = subprocess.Popen(
            line, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path
        )
        watcher = threading.Thread(target=peak_tree, args=(process, peaks))
        watcher.start()
        out = process.communicate(timeout=600)[0].decode(errors="replace")
        watcher.join()
        # the grader alone holds more than 32 MiB
        assert 32 << 20 < peaks[0] < CEILING, (line[-1], peaks[0] >> 20, out[-2000:])
        assert "fault in the grader" not in out, out[-2000:]
    if command == "batch":
        with (tmp_path / "g.csv").open(newline="", encoding="utf-8") as rows:
            points = {
                Path(row["folder"]).name: {name: float(row[name]) for name in ("heads", "training")}
                for row in csv.DictReader(rows)
            }
    else:
        points = {
            f.name: {
                e["name"]: e["points"]
                for e in json.loads((tmp_path / f"{f.name}.json").read_text())["exercises"]
            }
            for f in folders
        }
    assert points == {
        "costly_asks": {"heads": 0.0, "training": 0.0},
        "costly_sgd_ask": {"heads": 0.0, "training": 0.0},
        good.name: FULL,
    }


def test_the_helper_sends_back_none_for_a_large_argument_the_reference_left_alone_and_the_stand_in_keeps_its_own(
    tmp_path,
):
    """The stand-in's array needs no copy back; its value comes whole, and a head built on it is the reference's."""
    from grader.sandbox.helper import _run
    from solutions.softmax import softmax

    x = np.random.default_rng(3).normal(size=(64, 141))
    answer = _run(
        {"module": "solutions.softmax", "function": "softmax"},
        encode({"ask": "softmax.softmax", "args": (x,)}),
    )
    assert answer["args"] == (None,) and np.array_equal(answer["value"], softmax(x))
    small = _run(
        {"module": "solutions.softmax", "function": "softmax"},
        encode({"ask": "softmax.softmax", "args": (x[:2],)}),
    )
    assert np.array_equal(small["args"][0], x[:2])
    from solutions.heads import attention_head

    inputs = scale.head()
    with StudentCode(
        submission(tmp_path), reference=reference_for(frozenset({"softmax.softmax"}))
    ) as student:
        out = student.call("heads", "attention_head", *inputs).value
    np.testing.assert_allclose(out[0], attention_head(*inputs)[0])
