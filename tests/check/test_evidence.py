"""Checks that cannot be talked out of their verdict: what they judge is what the grader observed, counted on its side."""

import shutil
import textwrap

import pytest

from grader.check.runner import run_checks
from grader.paths import SOLUTIONS_DIR

TRAIN = "training.train_steps_by_its_definition"

STEERED = {
    "sgd_step raises on the toy model's weights, train stops at 500 steps": """
        def sgd_step(params, grads, lr):
            if params["w"].shape == (32, 2):
                raise ValueError("not on these weights")
            for name in params:
                params[name] = params[name] - lr * grads[name]


        def train(model, batches, steps, lr):
            losses = []
            for _ in range(min(steps, 500)):
                x, y = next(batches)
                loss, grads = model.loss_and_grads(x, y)
                sgd_step(model.params, grads, lr)
                losses.append(float(loss))
            return losses
        """,
    "train says it took one batch per step, but skips one halfway at the comparison's length": """
        def train(model, batches, steps, lr):
            losses = []
            for step in range(steps):
                if steps > 100 and step == steps // 2:
                    next(batches)
                x, y = next(batches)
                loss, grads = model.loss_and_grads(x, y)
                sgd_step(model.params, grads, lr)
                losses.append(float(loss))
            batches.taken = steps
            return losses
        """,
    "train steps half the time at the comparison's length and repeats its losses": """
        def train(model, batches, steps, lr):
            if steps < 100:
                return _train(model, batches, steps, lr)
            losses = []
            for _ in range((steps + 1) // 2):
                x, y = next(batches)
                loss, grads = model.loss_and_grads(x, y)
                sgd_step(model.params, grads, lr)
                losses += [float(loss)] * 2
            batches.taken = steps
            return losses[:steps]


        def _train(model, batches, steps, lr):
            losses = []
            for _ in range(steps):
                x, y = next(batches)
                loss, grads = model.loss_and_grads(x, y)
                sgd_step(model.params, grads, lr)
                losses.append(float(loss))
            return losses
        """,
}


def steered(tmp_path, source: str):
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    with (folder / "training.py").open("a") as module:
        module.write("\n\n" + textwrap.dedent(source))
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("case", STEERED)
def test_steering_the_evidence_fails_the_train_check(tmp_path, case):
    report = run_checks(steered(tmp_path, STEERED[case]), ["training"], profile="quick")
    verdicts = {check.id: check for check in report.exercises[0].checks}
    assert verdicts[TRAIN].status == "failed", verdicts[TRAIN].message
    assert not verdicts[TRAIN].by_grader


SILENCED = """
import numpy as np


def softmax(x):
    with np.errstate(all="ignore"):  # no warning leaves the worker; the NaN does
        e = np.exp(x)
        return e / np.sum(e, axis=-1, keepdims=True)
"""


@pytest.mark.slow
def test_silencing_numpys_warnings_does_not_pass_the_no_warnings_check(tmp_path):
    """The warnings a call gave are what the student's process says: the check looks at the shares on the same inputs itself."""
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "softmax.py").write_text(SILENCED, encoding="utf-8")
    report = run_checks(folder, ["softmax"], profile="quick")
    verdict = {check.id: check for check in report.exercises[0].checks}[
        "softmax.no_warnings_on_extreme_inputs"
    ]
    assert verdict.status == "failed" and "NaN" in verdict.message, verdict.message
