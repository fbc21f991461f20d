"""Hidden checks for exercise 5: softmax_backward, attention_head_backward, sgd_step and train."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from grader.check.checks.harness import GRADIENT, expect_close, expect_unchanged, fail
from grader.check.checks.strategies import fill, head_inputs, softmax_inputs
from grader.check.diagnosis import diagnose
from grader.sandbox.codec import Batches, ToyModel
from grader.sandbox.toymodel import BatchFeed, LinearModel
from solutions.heads import attention_head
from solutions.softmax import softmax
from solutions.training import attention_head_backward, softmax_backward, train

EXERCISE = "training"
HEAD_NAMES = ("d_out", "x", "w_q", "w_k", "w_v")
GRAD_NAMES = ("d_x", "d_w_q", "d_w_k", "d_w_v")
RATES = st.sampled_from((0.5, 0.1, 0.01))  # learning rates
LATER = {"training.softmax_backward", "training.sgd_step"}  # the reference, where a check builds on them
STEP = 1e-5  # central differences: error about STEP² from the curvature, 1e-16/STEP from rounding


def numeric_gradient(loss, point: np.ndarray) -> np.ndarray:
    """The gradient of loss() with respect to the array point, by central differences."""
    grad = np.zeros_like(point)
    for i in np.ndindex(point.shape):
        keep = point[i]
        point[i] = keep + STEP
        up = loss()
        point[i] = keep - STEP
        down = loss()
        point[i] = keep
        grad[i] = (up - down) / (2 * STEP)
    return grad


@st.composite
def softmax_grads(draw, masked: bool = True):
    """shares = softmax(x) and d_shares shaped like them."""
    x = draw(softmax_inputs(bound=3.0, masked=masked))
    return x, softmax(x), fill(draw, x.shape, 2.0)


@st.composite
def head_grads(draw):
    """d_out and the inputs of a head."""
    x, w_q, w_k, w_v = draw(head_inputs())
    return fill(draw, x.shape[:-1] + w_v.shape[-1:], 2.0), x, w_q, w_k, w_v


def backward_of(student, d_shares, shares):
    """The student's softmax_backward(shares, d_shares)."""
    return student.call("training", "softmax_backward", shares, d_shares).value


def head_backward_of(student, args):
    """The student's four head gradients, with the reference softmax_backward in place."""
    got = student.call("training", "attention_head_backward", *args, reference=LATER).value
    if not isinstance(got, (tuple, list)) or len(got) != 4:
        fail("attention_head_backward should return four arrays (d_x, d_w_q, d_w_k, d_w_v).", dict(zip(HEAD_NAMES, args)), got=got)
    return got


@given(softmax_grads())
def test_softmax_backward_matches_reference(student, drawn):
    """The gradient equals the reference's, with -inf scores (zero shares) and any batch axes."""
    x, shares, d_shares = drawn
    got = backward_of(student, d_shares, shares)
    inputs = {"shares": shares, "d_shares": d_shares}
    mistake = lambda: diagnose("softmax_backward", (shares, d_shares), got)  # noqa: E731
    expect_close(got, softmax_backward(shares, d_shares), "softmax_backward(shares, d_shares)", inputs, GRADIENT, mistake)


@given(softmax_grads(masked=False))
def test_softmax_backward_finite_differences(student, drawn):
    """The gradient agrees with central finite differences of sum(d_shares · softmax(x))."""
    x, shares, d_shares = drawn
    point = x.copy()
    expected = numeric_gradient(lambda: np.sum(d_shares * softmax(point)), point)
    got = backward_of(student, d_shares, shares)
    inputs = {"x": x, "shares": shares, "d_shares": d_shares}
    mistake = lambda: diagnose("softmax_backward", (shares, d_shares), got)  # noqa: E731
    expect_close(got, expected, "softmax_backward against finite differences", inputs, GRADIENT, mistake)


@given(head_grads())
def test_head_backward_matches_reference(student, args):
    """All four gradients equal the reference's, weight gradients summed over the batch axes."""
    got = head_backward_of(student, args)
    inputs = dict(zip(HEAD_NAMES, args))
    for n, (name, mine, theirs) in enumerate(zip(GRAD_NAMES, got, attention_head_backward(*args))):
        mistake = lambda: diagnose("attention_head_backward", args, mine, part=n)  # noqa: E731
        expect_close(mine, theirs, name, inputs, GRADIENT, mistake)


@given(head_grads())
def test_head_backward_finite_differences(student, args):
    """All four gradients agree with central finite differences of sum(d_out · out)."""
    d_out, *point = (a.copy() for a in args)
    got = head_backward_of(student, args)
    inputs = dict(zip(HEAD_NAMES, args))
    for n, name in enumerate(GRAD_NAMES):
        expected = numeric_gradient(lambda: np.sum(d_out * attention_head(*point)[0]), point[n])
        mistake = lambda: diagnose("attention_head_backward", args, got[n], part=n)  # noqa: E731
        expect_close(got[n], expected, f"{name} against finite differences", inputs, GRADIENT, mistake)


@st.composite
def params_and_grads(draw):
    """A dict of parameters, gradients with the same names and shapes, and a learning rate."""
    names = draw(st.lists(st.sampled_from(["w", "b", "w_q", "w_k", "w_v"]), min_size=1, max_size=3, unique=True))
    shapes = {name: draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple)) for name in names}
    params = {name: fill(draw, shape) for name, shape in shapes.items()}
    grads = {name: fill(draw, shape) for name, shape in shapes.items()}
    return params, grads, draw(RATES)


@given(params_and_grads())
def test_sgd_step_moves_downhill(student, drawn):
    """Afterwards params[name] holds p - lr·g for every name, and the step returns None."""
    params, grads, lr = drawn
    outcome = student.call("training", "sgd_step", params, grads, lr)
    inputs = {"params": params, "grads": grads, "lr": lr}
    if outcome.value is not None:
        fail("sgd_step should return None and change params itself.", inputs, got=outcome.value)
    after = outcome.args[0]
    if not isinstance(after, dict) or set(after) != set(params):
        fail("After sgd_step, params should hold the same names.", inputs, sorted(params), after)
    for name in params:
        expected = params[name] - lr * grads[name]
        mistake = "a step up the gradient (p + lr·g) instead of down" if np.allclose(after[name], params[name] + lr * grads[name]) else None
        expect_close(after[name], expected, f"params[{name!r}] after sgd_step", inputs, mistake=mistake)


@st.composite
def training_runs(draw):
    """Initial weights of the toy model, more (x, y) batches than steps, the steps and lr."""
    c, o, n, steps = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    params = {"w": fill(draw, (c, o), 1.0), "b": fill(draw, (o,), 1.0)}
    pairs = [(fill(draw, (n, c), 2.0), fill(draw, (n, o), 2.0)) for _ in range(steps + 2)]
    return params, pairs, steps, draw(RATES)


@given(training_runs())
def test_train_matches_reference(student, run):
    """One step per batch, the losses as floats, the final weights as the reference's (reference sgd_step in place)."""
    params, pairs, steps, lr = run
    outcome = student.call("training", "train", ToyModel(params), Batches(pairs), steps, lr, reference=LATER)
    model, batches = LinearModel({k: v.copy() for k, v in params.items()}), BatchFeed(pairs)
    expected = train(model, batches, steps, lr)
    inputs = {"steps": steps, "lr": lr, "batches": [x for pair in pairs[:steps] for x in pair]}
    losses = outcome.value
    if not isinstance(losses, list) or not all(isinstance(v, float) for v in losses):
        fail("train should return a list of Python floats, one loss per step (float(loss) converts).", inputs, expected, losses)
    if outcome.args[1].taken != steps:
        fail(f"train should take exactly one batch per step ({steps}).", inputs, steps, outcome.args[1].taken)
    expect_close(np.array(losses), np.array(expected), "the list of losses", inputs)
    for name, value in model.params.items():
        expect_close(outcome.args[0].params[name], value, f"model.params[{name!r}] after training", inputs)


@given(head_grads())
def test_inputs_unchanged(student, args):
    """softmax_backward, attention_head_backward and sgd_step's grads are the same after the calls."""
    x = args[1]
    shares, d_shares = softmax(x), np.cos(x)
    outcome = student.call("training", "softmax_backward", shares, d_shares)
    expect_unchanged({"shares": shares, "d_shares": d_shares}, outcome.args, "softmax_backward")
    outcome = student.call("training", "attention_head_backward", *args, reference=LATER)
    expect_unchanged(dict(zip(HEAD_NAMES, args)), outcome.args, "attention_head_backward")
    grads = {"w": x}
    outcome = student.call("training", "sgd_step", {"w": x.copy()}, grads, 0.1)
    expect_unchanged({"grads['w']": x}, [outcome.args[1]["w"]], "sgd_step")
