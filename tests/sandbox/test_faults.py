"""The grader's own faults are the grader's, the student's are the student's: any bytes, module text or string a student makes."""

import json
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from folders import submission

from grader.check.checks.harness import reference_for, reference_functions
from grader.check.runner import run_checks
from grader.sandbox.errors import StudentError
from grader.sandbox.handle import StudentCode
from grader.sandbox.helper import HELPER
from grader.sandbox.worker.codec import Batches, ToyModel, _npy_header, decode
from solutions.heads import multi_head_attention
from solutions.training import softmax_backward

X = np.ones((1, 2, 3))
HEADS = [(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)))]
W_O = np.ones((2, 3))


@pytest.mark.parametrize("write", ["channel.write(b'ab')", "os.write(channel.replies, b'ab')"])
def test_a_two_byte_frame_is_the_students_bad_output_and_the_next_call_is_in_step(tmp_path, write):
    folder = submission(
        tmp_path,
        heads="""
        import gc
        import os

        import numpy as np

        from .masking import apply_causal_mask
        from .scores import attention_scores
        from .softmax import softmax


        def attention_head(x, w_q, w_k, w_v):
            channel = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")
            WRITE
            return np.zeros((1, 2, 2)), np.zeros((1, 2, 2))


        def multi_head_attention(x, heads, w_o):
            outs = []
            for w_q, w_k, w_v in heads:
                q, k, v = x @ w_q, x @ w_k, x @ w_v
                outs.append(softmax(apply_causal_mask(attention_scores(q, k))) @ v)
            return np.concatenate(outs, axis=-1) @ w_o, []
        """.replace("WRITE", write),
    )
    with StudentCode(
        folder, reference=reference_for(reference_functions("heads")), timeout=10
    ) as student:
        with pytest.raises(StudentError) as raised:
            student.call("heads", "attention_head", X, *HEADS[0])
        assert (
            raised.value.kind == "bad_output" and "fault in the grader" not in raised.value.message
        )
        got = student.call("heads", "multi_head_attention", X, HEADS, W_O).value[0]
    assert np.allclose(got, multi_head_attention(X, HEADS, W_O)[0])


HUGE_ASK = """
import gc
import json
import struct
import sys

import numpy as np


def attention_head(x, w_q, w_k, w_v):
    channel = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")
    npy = sys.modules["grader.sandbox.worker.codec"]._npy_header("<f8", (0, 10**20))  # no data: numpy refuses the shape
    head = json.dumps({"tree": ["d", [["ask", "softmax.softmax"], ["args", ["t", [["a", 0]]]]]], "sizes": [len(npy)]}).encode()
    with channel.lock:
        channel.write(struct.pack("<I", len(head)) + head + npy)  # on the worker's own pipe, as a stand-in's ask
        channel.read()
    return np.zeros((1, 2, 2)), np.zeros((1, 2, 2))


def multi_head_attention(x, heads, w_o):
    return np.zeros((1, 2, 3)), []
"""


def test_an_ask_for_an_array_of_shape_0_by_10_to_the_20_is_the_students_and_the_helper_lives(
    tmp_path,
):
    """The ask the helper once died on: the grader refuses it as the call's bad output, before the helper sees it."""
    from solutions.softmax import softmax

    HELPER.start_soon()
    helper = HELPER.process
    with StudentCode(
        submission(tmp_path, heads=HUGE_ASK), reference=reference_for(reference_functions("heads"))
    ) as student:
        with pytest.raises(StudentError) as raised:
            student.call("heads", "attention_head", X, *HEADS[0])
        assert (
            raised.value.kind == "bad_output" and "fault in the grader" not in raised.value.message
        )
        assert "could not be read back" in raised.value.message
    assert HELPER.process is helper and helper.poll() is None
    npy = _npy_header("<f8", (0, 10**20))
    head = json.dumps(
        {
            "tree": ["d", [["ask", "softmax.softmax"], ["args", ["t", [["a", 0]]]]]],
            "sizes": [len(npy)],
        }
    ).encode()
    # past the grader's refusal, straight to the helper
    answer = decode(HELPER.answer(softmax, struct.pack("<I", len(head)) + head + npy))
    assert answer["error"] == "ValueError" and HELPER.process is helper and helper.poll() is None


def test_an_lr_past_any_float_is_refused_as_the_students_and_the_worker_stays_in_step(tmp_path):
    """sgd_step asked with lr = 10**400: refused by its contract (no OverflowError in the grader), and the next call is answered in step."""
    folder = submission(tmp_path)
    edit = (
        (folder / "training.py")
        .read_text()
        .replace("sgd_step(model.params, grads, lr)", "sgd_step(model.params, grads, 10**400)")
    )
    (folder / "training.py").write_text(edit)
    params, pairs = (
        {"w": np.zeros((3, 1)), "b": np.zeros(1)},
        [(np.ones((2, 3)), np.ones((2, 1)))] * 3,
    )
    shares, d_shares = np.array([[0.2, 0.8]]), np.array([[1.0, -1.0]])
    with StudentCode(folder, reference=reference_for(frozenset({"training.sgd_step"}))) as student:
        with pytest.raises(StudentError) as raised:
            student.call("training", "train", ToyModel(params), Batches(pairs), 3, 0.1)
        assert raised.value.kind == "raised" and "fault in the grader" not in raised.value.message
        assert "your train called sgd_step: lr must be a finite float" in raised.value.message
        got = student.call("training", "softmax_backward", shares, d_shares).value
    assert np.allclose(got, softmax_backward(shares, d_shares))


def test_grads_an_sgd_step_cleared_come_back_as_the_call_left_them(tmp_path):
    """What the check needs to say so itself: the call's arguments afterwards, here grads emptied, exactly as the call left them."""
    folder = submission(tmp_path)
    source = (folder / "training.py").read_text()
    cleared = source.replace(
        "        params[name] = params[name] - lr * grads[name]\n",
        "        params[name] = params[name] - lr * grads[name]\n    grads.clear()\n",
    )
    assert cleared != source
    (folder / "training.py").write_text(cleared)
    with StudentCode(folder) as student:
        outcome = student.call("training", "sgd_step", {"w": np.ones(2)}, {"w": np.ones(2)}, 0.5)
    assert outcome.args[1] == {} and np.array_equal(outcome.args[0]["w"], np.full(2, 0.5))


@pytest.mark.slow
def test_a_module_too_deep_for_the_parser_gets_its_own_verdict_and_the_others_are_graded(tmp_path):
    folder = submission(tmp_path)
    source = (folder / "softmax.py").read_text() + "\nTOTAL = " + " + ".join(["1"] * 30000) + "\n"
    (folder / "softmax.py").write_text(source)
    report = run_checks(folder, ["softmax", "heads"], profile="quick")
    softmax, heads = report.exercises
    assert softmax.status in ("error", "failed") and softmax.points == 0
    assert not any("fault in the grader" in check.message for check in softmax.checks)
    assert "softmax.py" in softmax.checks[0].message
    assert heads.status == "passed", [check.message for check in heads.checks]


@pytest.mark.slow
def test_a_lone_surrogate_in_a_message_is_shown_escaped_in_every_result_file(tmp_path):
    folder = submission(
        tmp_path, softmax='def softmax(x):\n    raise ValueError("bad \\ud800 row")\n'
    )
    result, junit = tmp_path / "result.json", tmp_path / "result.xml"
    command = [sys.executable, "-m", "grader", "check", "softmax", "--submission", str(folder)]
    run = subprocess.run(
        [*command, "--json", str(result), "--junit", str(junit)],
        capture_output=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stderr.decode(errors="replace")[-2000:]
    message = json.loads(result.read_text(encoding="utf-8"))["exercises"][0]["checks"][0]["message"]
    assert "\\ud800" in message and "fault in the grader" not in message
    assert "\\ud800" in ET.parse(junit).getroot().find(".//failure").get(
        "message", ""
    ) + ET.tostring(ET.parse(junit).getroot(), encoding="unicode")
    assert "\\ud800" in run.stdout.decode("utf-8")
