"""Public checks for exercise 5: finite differences for both backward passes, sgd_step and train by their definitions.

The finite differences need no reference: they differentiate the forward pass made of the
softmax (and the scores and mask) that the exercise builds on, called in the student's worker:
the student's own in the student's kit, the reference in the full kit.
"""

import copy

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from grader import kit
from grader.check.checks import scale
from grader.check.checks.differences import central_differences, expect_gradient, moved
from grader.check.checks.examples import examples, expect_example
from grader.check.checks.harness import (
    FORWARD,
    GRADIENT,
    CheckFailed,
    Halt,
    expect_array,
    expect_close,
    fail,
)
from grader.check.checks.judged import judges
from grader.check.checks.profiles import FEW
from grader.check.checks.replay import replayed
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import RATES, fill, head_grads, params_and_grads, softmax_grads
from grader.check.checks.trained import Pairs, by_definition, order_note, order_used
from grader.check.checks.unchanged import expect_unchanged
from grader.check.checks.where import which_wrong
from grader.check.checks.workers import ALSO_SERVED
from grader.sandbox.worker.codec import Batches, ToyModel
from grader.sandbox.worker.toymodel import LinearModel

EXERCISE = "training"
HEAD_NAMES = ("d_out", "x", "w_q", "w_k", "w_v")
GRAD_NAMES = ("d_x", "d_w_q", "d_w_k", "d_w_v")
LATER = ALSO_SERVED["training"]  # the reference, in the full kit, where a check builds on them
# float32 results: their rounding is about 6e-8 of each entry
FLOAT32 = {"rtol": 1e-5, "atol": 1e-6}


def whose() -> str:
    """Whose forward pass the finite differences differentiate, in words."""
    return "your own" if kit.is_student_kit() else "the reference"


def values_of(submission, module, function, *args, shape):
    """A forward function's value at many points in one call, checked to be an array of this shape."""
    got = submission.call(module, function, *args).value
    expect_array(got, shape, f"{function}, called with input of shape {args[0].shape},", {})
    return got


@judges("softmax_backward")
@at_scale(scale.softmax_grads)
@given(softmax_grads())
def test_softmax_backward_finite_differences(submission, drawn):
    """The gradient agrees with central finite differences of sum(d_shares · softmax(x))."""
    x, d_shares = drawn
    shares = values_of(submission, "softmax", "softmax", x, shape=x.shape)
    (points,) = moved([x])
    losses = np.sum(
        d_shares * values_of(submission, "softmax", "softmax", points, shape=points.shape),
        axis=tuple(range(1, points.ndim)),
    )
    (slopes,) = central_differences(losses, [x])
    got = submission.call("training", "softmax_backward", shares, d_shares).value
    what = f"softmax_backward(shares, d_shares), against finite differences of sum(d_shares · softmax(x)) with {whose()} softmax,"
    try:
        expect_gradient(got, slopes, x, what, {"x": x, "shares": shares, "d_shares": d_shares})
    except (
        CheckFailed
    ) as failed:  # the gradient found, for `grader try`, as the expected value of this very call
        gradient = (
            failed.expected
            if isinstance(failed.expected, np.ndarray) and failed.expected.shape == x.shape
            else None
        )
        inputs = {"shares": shares, "d_shares": d_shares}  # not slopes along directions
        raise CheckFailed(str(failed), gradient, inputs, failed.mistake) from None


def head_losses(submission, d_out, x, w_q, w_k, w_v) -> np.ndarray:
    """sum(d_out · out) at many points along the leading axis, out = softmax(mask(scores)) · values."""
    n = len(x)
    scores = values_of(
        submission,
        "scores",
        "attention_scores",
        x @ w_q,
        x @ w_k,
        shape=x.shape[:-1] + x.shape[-2:-1],
    )
    masked = values_of(submission, "masking", "apply_causal_mask", scores, shape=scores.shape)
    shares = values_of(submission, "softmax", "softmax", masked, shape=scores.shape)
    out = shares @ (x @ w_v)  # (n, ..., T, d_v)
    return np.sum(d_out * out, axis=tuple(range(1, out.ndim))).reshape(n)


@judges("attention_head_backward")
@at_scale(scale.head_grads)
@given(head_grads())
def test_head_backward_finite_differences(submission, args):
    """All four gradients agree with central finite differences of sum(d_out · out)."""
    d_out, *point = args
    batch = point[0].ndim - 2
    x, w_q, w_k, w_v = moved(point)
    # broadcast over x's batch axes
    w_q, w_k, w_v = (w.reshape(w.shape[:1] + (1,) * batch + w.shape[1:]) for w in (w_q, w_k, w_v))
    slopes = central_differences(head_losses(submission, d_out, x, w_q, w_k, w_v), point)
    got = submission.call("training", "attention_head_backward", *args, reference=LATER).value
    inputs = dict(zip(HEAD_NAMES, args))
    if not isinstance(got, (tuple, list)) or len(got) != 4:
        fail(
            "attention_head_backward should return four arrays (d_x, d_w_q, d_w_k, d_w_v).",
            inputs,
            got=got,
        )
    forward = f"{whose()} attention_scores, apply_causal_mask and softmax"
    failures = {}  # every gradient is checked, so the message can say which are wrong and which right
    for name, mine, found, at in zip(GRAD_NAMES, got, slopes, point):
        what = f"{name}, against finite differences of sum(d_out · out) for the head made of {forward},"
        try:
            expect_gradient(mine, found, at, what, inputs)
        except CheckFailed as failed:
            failures[name] = failed
    if failures:
        first = next(iter(failures.values()))
        said = which_wrong(list(GRAD_NAMES), list(failures), "gradients")
        raise CheckFailed(f"{first}\n{said}", first.expected, first.inputs, first.mistake)


@judges("sgd_step", defining=True)
@at_scale(scale.params_and_grads)
@given(params_and_grads())
def test_sgd_step_moves_downhill(submission, drawn):
    """Afterwards params[name] holds p - lr·g for every name, and the step returns None; grads come in another order than params."""
    params, grads, lr = drawn
    outcome = submission.call("training", "sgd_step", params, grads, lr)
    expect_step(outcome, params, grads, lr, "after sgd_step", FORWARD)


def expect_step(outcome, params: dict, grads: dict, lr: float, when: str, tolerance: dict) -> dict:
    """Fail unless the sgd_step call returned None and left params[name] at p - lr·g for every name; params as it left them."""
    inputs = {"params": params, "grads": grads, "lr": lr}
    if outcome.value is not None:
        fail("sgd_step should return None and change params itself.", inputs, got=outcome.value)
    after = outcome.args[0]
    if not isinstance(after, dict) or set(after) != set(params):
        fail(
            f"{when[0].upper()}{when[1:]}, params should hold the same names.",
            inputs,
            sorted(params),
            after,
        )
    for name in params:
        expected = params[name] - lr * grads[name]
        mistake = (
            "a step up the gradient (p + lr·g) instead of down"
            if np.allclose(after[name], params[name] + lr * grads[name])
            else None
        )
        expect_close(after[name], expected, f"params[{name!r}] {when}", inputs, tolerance, mistake)
    return after


@judges("sgd_step")
def test_sgd_step_as_the_comparison_calls_it(submission):
    """Three steps on the attention model's parameters as `grader compare` makes them: float32, its gradients in another order."""
    params, grads = scale.as_compared()
    for step in range(1, 4):
        outcome = submission.call("training", "sgd_step", params, grads, scale.LR)
        when = f"after step {step} of sgd_step on the parameters `grader compare` trains (float32, their gradients in another order)"
        params = expect_step(outcome, params, grads, scale.LR, when, FLOAT32)


@st.composite
def training_runs(draw):
    """Initial weights of the toy model, more (x, y) batches than steps, the steps and lr."""
    c, o, n, steps = (
        draw(st.integers(1, 3)),
        draw(st.integers(1, 2)),
        draw(st.integers(1, 4)),
        draw(st.integers(1, 4)),
    )
    params = {"w": fill(draw, (c, o), 1.0), "b": fill(draw, (o,), 1.0)}
    pairs = [(fill(draw, (n, c), 2.0), fill(draw, (n, o), 2.0)) for _ in range(steps + 2)]
    return params, pairs, steps, draw(RATES), True


def counted_run() -> tuple:
    """The comparison's length, where only the steps are counted (see the check)."""
    return (*scale.training_run(), False)


def sgd_step_fails(submission, params: dict, pairs: list, lr: float) -> bool:
    """Whether the student's own sgd_step does not give p - lr·g on the toy model's first step (raises or is wrong)."""
    _, grads = LinearModel(dict(params)).loss_and_grads(*pairs[0])
    try:
        after = submission.call("training", "sgd_step", dict(params), grads, lr).args[0]
    except (CheckFailed, Halt):
        return True
    expected = {name: params[name] - lr * grads[name] for name in params}
    return not (
        type(after) is dict
        and set(after) == set(expected)
        and all(
            type(after[n]) is np.ndarray
            and after[n].shape == expected[n].shape
            and after[n].dtype.itemsize
            >= expected[n].dtype.itemsize  # float32 weights fail sgd_step's own check
            and np.allclose(after[n], expected[n])
            for n in expected
        )
    )


@judges("train", defining=True)
@at_scale(counted_run)
@given(training_runs())
def test_train_steps_by_its_definition(submission, run):
    """One batch per step, in order; the losses as floats; the weights after steps of p - lr·g.

    At the comparison's 1,000 steps train runs with the student's own sgd_step when it gives p - lr·g on
    the toy model's weights (the reference's, asked of the grader on every step, adds 0.4 s), and with
    the reference's otherwise, so the check always runs to its end and a wrong sgd_step counts once. The
    losses and weights are compared with the grader's own run. On the drawn runs the batches are handed
    out and counted by the grader (grader.sandbox.worker.toymodel.TAKEN), where the student's code cannot change
    the count. At the comparison's length they go along with the call and the worker counts them: a
    round trip per step cost 0.3-0.6 s, and a count changed there could hide nothing the drawn runs do not
    catch first, since these losses and weights show every batch that was used and in which order.
    """
    params, pairs, steps, lr, by_value = run
    served = LATER if by_value or sgd_step_fails(submission, params, pairs, lr) else ()
    batches = Batches(pairs, sent=not by_value)
    outcome = submission.call(
        "training", "train", ToyModel(params), batches, steps, lr, reference=served
    )
    expected, weights = by_definition(params, pairs, steps, lr)
    taken = outcome.args[1].taken
    inputs = {"steps": steps, "lr": lr, "batches": Pairs(pairs, taken, listed=by_value)}
    losses = outcome.value
    if not isinstance(losses, list) or not all(isinstance(v, float) for v in losses):
        fail(
            "train should return a list of Python floats, one loss per step (float(loss) converts).",
            inputs,
            expected,
            losses,
        )
    order = order_note(order_used(params, pairs[:taken], losses, lr))
    if taken != steps:
        extra = (
            (
                "One more than it used: zip(batches, range(steps)) does that, since zip takes the next batch before it finds "
                "range(steps) used up. Take next(batches) once per step (or zip(range(steps), batches))."
            )
            if taken == steps + 1
            else ""
        )
        said = f"train should take exactly one batch per step: {steps} for steps={steps}, but it took {taken}. {extra}".rstrip()
        fail(said + (f"\n{order}" if order else ""), inputs)
    if len(losses) != steps:
        fail(
            f"train should return one loss per step: {steps} for steps={steps}, but it returned {len(losses)}.",
            inputs,
        )
    if order:
        fail(
            f"train used the batches in another order than given.\n{order}",
            inputs,
            np.array(expected),
            np.array(losses),
        )
    expect_close(
        np.array(losses),
        np.array(expected),
        "the list of losses (each the loss before its step)",
        inputs,
    )
    after = getattr(outcome.args[0], "params", None)
    if type(after) is not dict or set(after) != set(weights):
        fail(
            f"After train, model.params should hold the same names, {sorted(weights)}.",
            inputs,
            sorted(weights),
            after,
        )
    for name, value in weights.items():
        expect_close(
            after[name],
            value,
            f"model.params[{name!r}] after {steps} step{'s' if steps != 1 else ''} of p - lr·g",
            inputs,
        )


def some_shares(x: np.ndarray) -> np.ndarray:
    """Rows of positive shares summing to 1, shaped like x (not a softmax: any such rows serve)."""
    weights = np.exp(-np.square(x))
    return weights / weights.sum(axis=-1, keepdims=True)


@judges("softmax_backward", "attention_head_backward", "sgd_step", guard=True)
@at_scale(scale.head_grads)
@FEW
@given(head_grads())
def test_inputs_unchanged(submission, args):
    """softmax_backward's and attention_head_backward's arguments, and sgd_step's grads (its entries and their order), are the same after the calls."""
    x = args[1]
    shares, d_shares = some_shares(x), np.cos(x)
    outcome = submission.call("training", "softmax_backward", shares, d_shares)
    expect_unchanged(
        {"shares": shares.copy(), "d_shares": d_shares.copy()}, outcome.args, "softmax_backward"
    )
    before = copy.deepcopy(args)
    outcome = submission.call("training", "attention_head_backward", *args, reference=LATER)
    expect_unchanged(dict(zip(HEAD_NAMES, before)), outcome.args, "attention_head_backward")
    # grads in another order, as the comparison's
    params, grads = ({"w": x.copy(), "b": x[..., 0].copy()}, {"b": np.sin(x[..., 0]), "w": x})
    before = copy.deepcopy(grads)
    outcome = submission.call("training", "sgd_step", params, grads, 0.1)
    expect_unchanged({"grads": before}, outcome.args[1:2], "sgd_step")


HUGE = 2.0**600  # beyond float32's range (3.4e38); a power of two scales float64 exactly


@judges("softmax_backward")
@replayed
@FEW
@given(softmax_grads())
def test_softmax_backward_is_linear_in_d_shares(submission, drawn):
    """softmax_backward(shares, 2**600 · d_shares) is 2**600 times softmax_backward(shares, d_shares): float64 throughout."""
    x, d_shares = drawn
    # the finite differences' calls, answered again
    shares = values_of(submission, "softmax", "softmax", x, shape=x.shape)
    one = submission.call("training", "softmax_backward", shares, d_shares).value
    expect_array(
        one, x.shape, "softmax_backward(shares, d_shares)", {"shares": shares, "d_shares": d_shares}
    )
    inputs = {"shares": shares, "d_shares": d_shares * HUGE}
    got = submission.call("training", "softmax_backward", shares, d_shares * HUGE).value
    expect_array(got, x.shape, "softmax_backward(shares, 2**600 · d_shares)", inputs)
    what = "softmax_backward(shares, 2**600 · d_shares) / 2**600, against softmax_backward(shares, d_shares),"
    expect_close(got / HUGE, one, what, inputs, GRADIENT)


@judges("attention_head_backward")
@replayed
@FEW
@given(head_grads())
def test_head_backward_is_linear_in_d_out(submission, args):
    """attention_head_backward(2**600 · d_out, ...) is 2**600 times attention_head_backward(d_out, ...): float64 throughout."""
    d_out, *point = args
    one = backward(submission, args)  # the finite differences' call, answered again
    got = backward(submission, (d_out * HUGE, *point))
    inputs = dict(zip(HEAD_NAMES, (d_out * HUGE, *point)))
    for name, mine, base in zip(GRAD_NAMES, got, one):
        expect_close(
            mine / HUGE,
            base,
            f"{name} for 2**600 · d_out, divided by 2**600, against {name} for d_out,",
            inputs,
            GRADIENT,
        )


def backward(submission, args) -> tuple:
    """The student's four gradients for these arguments, each checked to be an array shaped like what it is the gradient of."""
    inputs = dict(zip(HEAD_NAMES, args))
    got = submission.call("training", "attention_head_backward", *args, reference=LATER).value
    if not isinstance(got, (tuple, list)) or len(got) != 4:
        fail(
            "attention_head_backward should return four arrays (d_x, d_w_q, d_w_k, d_w_v).",
            inputs,
            got=got,
        )
    for name, mine, like in zip(GRAD_NAMES, got, args[1:]):
        expect_array(mine, like.shape, name, inputs)
    return tuple(got)


@judges("softmax_backward")
def test_softmax_backward_worked_examples(submission):
    """softmax_backward on the worked examples, up to the comparison's float32 shares."""
    for example in examples("training.softmax_backward"):
        expect_example(
            submission.call("training", "softmax_backward", *example.args()).value, example
        )


@judges("attention_head_backward")
def test_head_backward_worked_examples(submission):
    """attention_head_backward on the worked examples, up to the comparison's own float32 head."""
    for example in examples("training.attention_head_backward"):
        expect_example(
            submission.call(
                "training", "attention_head_backward", *example.args(), reference=LATER
            ).value,
            example,
        )
