"""Public checks for exercise 5: finite differences for both backward passes, sgd_step and train by their definitions.

The finite differences need no reference: they differentiate the forward pass made of the
softmax (and the scores and mask) that the exercise builds on, called in the student's worker:
the student's own in the student's kit, the reference in the full kit.
"""

import functools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from grader import kit
from grader.check.checks import scale
from grader.check.checks.examples import examples, expect_example
from grader.check.checks.harness import GRADIENT, CheckFailed, Halt, expect_array, expect_close, expect_unchanged, fail
from grader.check.checks.profiles import FEW
from grader.check.checks.scale import at_scale
from grader.check.checks.strategies import fill, head_inputs, softmax_inputs
from grader.check.checks.trained import Pairs, by_definition, order_note, order_used
from grader.check.checks.where import which_wrong
from grader.check.checks.workers import ALSO_SERVED
from grader.sandbox.codec import Batches, ToyModel
from grader.sandbox.toymodel import LinearModel

EXERCISE = "training"
HEAD_NAMES = ("d_out", "x", "w_q", "w_k", "w_v")
GRAD_NAMES = ("d_x", "d_w_q", "d_w_k", "d_w_v")
RATES = st.sampled_from((0.5, 0.1, 0.01))  # learning rates
LATER = ALSO_SERVED["training"]  # the reference, in the full kit, where a check builds on them
STEP = 1e-5  # central differences: error about STEP² from the curvature, 1e-16/STEP from rounding


def whose() -> str:
    """Whose forward pass the finite differences differentiate, in words."""
    return "your own" if kit.is_student_kit() else "the reference"


ENTRIES = 512  # a point of up to this many entries is moved one entry at a time; a larger one along a random direction


def directions(point: np.ndarray) -> np.ndarray:
    """(k, *shape): each entry alone for a small point, else one fixed random direction of length 1 (read-only)."""
    return _directions(point.shape)


@functools.lru_cache(maxsize=8)
def _directions(shape: tuple) -> np.ndarray:
    """directions' array for a point of this shape, kept for the example's other points and steps (each asks three times)."""
    size = int(np.prod(shape))
    if size <= ENTRIES:
        ways = np.eye(size).reshape((size,) + shape)
    else:
        way = np.random.default_rng([7, *shape]).standard_normal((1,) + shape)
        ways = way / np.sqrt(np.sum(way**2))
    ways.flags.writeable = False
    return ways


def moved(points: list[np.ndarray]) -> list[np.ndarray]:
    """All points at once, each point moved by +STEP and by -STEP along each of its directions, on a new leading axis.

    For points with k_0, k_1, ... directions the leading axis has 2·(k_0 + k_1 + ...) rows: for point i,
    k_i rows moved up, then k_i moved down; the other points as they are.
    """
    blocks = []
    for i, point in enumerate(points):
        step = directions(point) * STEP  # (k, *shape)
        shifted = np.concatenate([point + step, point - step])  # (2k, *shape)
        blocks.append([shifted if j == i else np.broadcast_to(other, (len(shifted),) + other.shape) for j, other in enumerate(points)])
    return [np.concatenate([block[j] for block in blocks]) for j in range(len(points))]


def central_differences(losses: np.ndarray, points: list[np.ndarray]) -> list[np.ndarray]:
    """From the losses at the moved points (in the order of moved), each point's slope along each of its directions."""
    slopes, start = [], 0
    for point in points:
        k = len(directions(point))
        up, down = losses[start : start + k], losses[start + k : start + 2 * k]
        slopes.append((up - down) / (2 * STEP))
        start += 2 * k
    return slopes


def expect_gradient(got, slopes: np.ndarray, point: np.ndarray, what: str, inputs: dict):
    """Fail unless got, the gradient at point, has the slopes found along the point's directions."""
    ways = directions(point)
    if len(ways) == point.size:  # one entry at a time: the slopes are the gradient itself
        expect_close(got, slopes.reshape(point.shape), what, inputs, GRADIENT)
        return
    expect_array(got, point.shape, what, inputs)
    along = np.tensordot(ways, got, axes=point.ndim)  # (k,)
    expect_close(along, slopes, f"{what} taken along a fixed random direction (the slope there)", inputs, GRADIENT)


def values_of(submission, module, function, *args, shape):
    """A forward function's value at many points in one call, checked to be an array of this shape."""
    got = submission.call(module, function, *args).value
    expect_array(got, shape, f"{function}, called with input of shape {args[0].shape},", {})
    return got


@st.composite
def softmax_grads(draw):
    """x, and d_shares shaped like it."""
    x = draw(softmax_inputs(bound=3.0, masked=False))
    return x, fill(draw, x.shape, 2.0)


@st.composite
def head_grads(draw):
    """d_out and the inputs of a head."""
    x, w_q, w_k, w_v = draw(head_inputs())
    return fill(draw, x.shape[:-1] + w_v.shape[-1:], 2.0), x, w_q, w_k, w_v


@at_scale(scale.softmax_grads)
@given(softmax_grads())
def test_softmax_backward_finite_differences(submission, drawn):
    """The gradient agrees with central finite differences of sum(d_shares · softmax(x))."""
    x, d_shares = drawn
    shares = values_of(submission, "softmax", "softmax", x, shape=x.shape)
    (points,) = moved([x])
    losses = np.sum(d_shares * values_of(submission, "softmax", "softmax", points, shape=points.shape), axis=tuple(range(1, points.ndim)))
    (slopes,) = central_differences(losses, [x])
    got = submission.call("training", "softmax_backward", shares, d_shares).value
    what = f"softmax_backward(shares, d_shares), against finite differences of sum(d_shares · softmax(x)) with {whose()} softmax,"
    try:
        expect_gradient(got, slopes, x, what, {"x": x, "shares": shares, "d_shares": d_shares})
    except CheckFailed as failed:  # the gradient found, for `grader try`, as the expected value of this very call
        gradient = failed.expected if isinstance(failed.expected, np.ndarray) and failed.expected.shape == x.shape else None
        inputs = {"shares": shares, "d_shares": d_shares}  # not slopes along directions
        raise CheckFailed(str(failed), gradient, inputs, failed.mistake) from None


def head_losses(submission, d_out, x, w_q, w_k, w_v) -> np.ndarray:
    """sum(d_out · out) at many points along the leading axis, out = softmax(mask(scores)) · values."""
    n = len(x)
    scores = values_of(submission, "scores", "attention_scores", x @ w_q, x @ w_k, shape=x.shape[:-1] + x.shape[-2:-1])
    masked = values_of(submission, "masking", "apply_causal_mask", scores, shape=scores.shape)
    shares = values_of(submission, "softmax", "softmax", masked, shape=scores.shape)
    out = shares @ (x @ w_v)  # (n, ..., T, d_v)
    return np.sum(d_out * out, axis=tuple(range(1, out.ndim))).reshape(n)


@at_scale(scale.head_grads)
@given(head_grads())
def test_head_backward_finite_differences(submission, args):
    """All four gradients agree with central finite differences of sum(d_out · out)."""
    d_out, *point = args
    batch = point[0].ndim - 2
    x, w_q, w_k, w_v = moved(point)
    w_q, w_k, w_v = (w.reshape(w.shape[:1] + (1,) * batch + w.shape[1:]) for w in (w_q, w_k, w_v))  # broadcast over x's batch axes
    slopes = central_differences(head_losses(submission, d_out, x, w_q, w_k, w_v), point)
    got = submission.call("training", "attention_head_backward", *args, reference=LATER).value
    inputs = dict(zip(HEAD_NAMES, args))
    if not isinstance(got, (tuple, list)) or len(got) != 4:
        fail("attention_head_backward should return four arrays (d_x, d_w_q, d_w_k, d_w_v).", inputs, got=got)
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


@st.composite
def params_and_grads(draw):
    """A dict of parameters, gradients with the same names and shapes, and a learning rate."""
    names = draw(st.lists(st.sampled_from(["w", "b", "w_q", "w_k", "w_v"]), min_size=1, max_size=3, unique=True))
    shapes = {name: draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple)) for name in names}
    params = {name: fill(draw, shape) for name, shape in shapes.items()}
    grads = {name: fill(draw, shape) for name, shape in shapes.items()}
    return params, grads, draw(RATES)


@at_scale(scale.params_and_grads)
@given(params_and_grads())
def test_sgd_step_moves_downhill(submission, drawn):
    """Afterwards params[name] holds p - lr·g for every name, and the step returns None."""
    params, grads, lr = drawn
    outcome = submission.call("training", "sgd_step", params, grads, lr)
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
            type(after[n]) is np.ndarray and after[n].shape == expected[n].shape and np.allclose(after[n], expected[n]) for n in expected
        )
    )


@at_scale(counted_run)
@given(training_runs())
def test_train_steps_by_its_definition(submission, run):
    """One batch per step, in order; the losses as floats; the weights after steps of p - lr·g.

    At the comparison's 1,000 steps train runs with the student's own sgd_step when it gives p - lr·g on
    the toy model's weights (the reference's, asked of the grader on every step, adds 0.4 s), and with
    the reference's otherwise, so the check always runs to its end and a wrong sgd_step counts once. The
    losses and weights are compared with the grader's own run. On the drawn runs the batches are handed
    out and counted by the grader (grader.sandbox.toymodel.TAKEN), where the student's code cannot change
    the count. At the comparison's length they go along with the call and the worker counts them: a
    round trip per step cost 0.3-0.6 s, and a count changed there could hide nothing the drawn runs do not
    catch first, since these losses and weights show every batch that was used and in which order.
    """
    params, pairs, steps, lr, by_value = run
    served = LATER if by_value or sgd_step_fails(submission, params, pairs, lr) else ()
    batches = Batches(pairs, sent=not by_value)
    outcome = submission.call("training", "train", ToyModel(params), batches, steps, lr, reference=served)
    expected, weights = by_definition(params, pairs, steps, lr)
    taken = outcome.args[1].taken
    inputs = {"steps": steps, "lr": lr, "batches": Pairs(pairs, taken, listed=by_value)}
    losses = outcome.value
    if not isinstance(losses, list) or not all(isinstance(v, float) for v in losses):
        fail("train should return a list of Python floats, one loss per step (float(loss) converts).", inputs, expected, losses)
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
        fail(f"train should return one loss per step: {steps} for steps={steps}, but it returned {len(losses)}.", inputs)
    if order:
        fail(f"train used the batches in another order than given.\n{order}", inputs, np.array(expected), np.array(losses))
    expect_close(np.array(losses), np.array(expected), "the list of losses (each the loss before its step)", inputs)
    after = getattr(outcome.args[0], "params", None)
    if type(after) is not dict or set(after) != set(weights):
        fail(f"After train, model.params should hold the same names, {sorted(weights)}.", inputs, sorted(weights), after)
    for name, value in weights.items():
        expect_close(after[name], value, f"model.params[{name!r}] after {steps} step{'s' if steps != 1 else ''} of p - lr·g", inputs)


@at_scale(scale.head_grads)
@FEW
@given(head_grads())
def test_inputs_unchanged(submission, args):
    """softmax_backward, attention_head_backward and sgd_step's grads are the same after the calls."""
    x = args[1]
    weights = np.exp(-np.square(x))
    shares, d_shares = weights / weights.sum(axis=-1, keepdims=True), np.cos(x)  # rows of positive shares summing to 1
    outcome = submission.call("training", "softmax_backward", shares, d_shares)
    expect_unchanged({"shares": shares, "d_shares": d_shares}, outcome.args, "softmax_backward")
    outcome = submission.call("training", "attention_head_backward", *args, reference=LATER)
    expect_unchanged(dict(zip(HEAD_NAMES, args)), outcome.args, "attention_head_backward")
    grads = {"w": x}
    outcome = submission.call("training", "sgd_step", {"w": x.copy()}, grads, 0.1)
    expect_unchanged({"grads['w']": x}, [outcome.args[1]["w"]], "sgd_step")


def test_softmax_backward_worked_examples(submission):
    """softmax_backward on the worked examples, up to the comparison's float32 shares."""
    for example in examples("training.softmax_backward"):
        expect_example(submission.call("training", "softmax_backward", *example.args()).value, example)


def test_head_backward_worked_examples(submission):
    """attention_head_backward on the worked examples, up to the comparison's own float32 head."""
    for example in examples("training.attention_head_backward"):
        expect_example(submission.call("training", "attention_head_backward", *example.args(), reference=LATER).value, example)
