"""The comparison's sizes, and every drawn check run once more at them after Hypothesis' small inputs.

Hypothesis draws small inputs, which shrink to a counterexample a student can read; code that
only breaks at the comparison's sizes (a mask made for 8 positions, a loop cut at 100 steps)
passes those. So each check also runs once on inputs as large as `grader compare` hands over:
batches of 16 replies of 141 positions (2 replies for a head, which is slower to check), the
head's widths, the attention model's parameters, 1,000 training steps in one call.
"""

import functools

import numpy as np

from grader.check.checks import replay
from grader.check.checks.harness import CheckFailed

# replies per batch, positions, head input, query and value sizes
BATCH, T, C, D, D_V = (16, 141, 32, 32, 128)
HEAD_BATCH = 2  # replies in a head's input: each crosses to the grader three times (scores, mask, softmax), and 16
# would double the time of `grader check heads`; the worked examples hold the comparison's batch of 16
VOCAB = 40  # the comparison's alphabet and boundary token: the width of its logits
STEPS = (
    1000  # steps of the comparison's longest train call, the MLP's (the attention model's is 400)
)
# the attention model's
PARAMS = {
    "emb": (VOCAB, 16),
    "w1": (128, 128),
    "b1": (128,),
    "w2": (128, VOCAB),
    "b2": (VOCAB,),
    "tok": (VOCAB, C),
    "pos": (160, C),
    "w_q": (C, D),
    "w_k": (C, D),
    "w_v": (C, D_V),
}
# its gradients, in the order its loss_and_grads gives them
GRADS = (
    "w2",
    "b2",
    "w1",
    "b1",
    "emb",
    "w_q",
    "w_k",
    "w_v",
    "tok",
    "pos",
)
DTYPE = np.float32  # the attention model's parameters and gradients
LR = 0.02  # the learning rate the comparison hands to train
SAID = (
    f"At the sizes `grader compare` uses ({T} positions, the head's widths {C} and {D_V}, {len(PARAMS)} parameters, "
    f"{STEPS:,} steps; float64), this check fails:"
)


def values(shape: tuple, bound: float, seed: int = 0) -> np.ndarray:
    """A float64 array of this shape, unrounded values in [-bound, bound], the same on every run: a copy, the caller's own."""
    return _drawn(tuple(shape), bound, seed).copy()


@functools.cache
def _drawn(shape: tuple, bound: float, seed: int) -> np.ndarray:
    """values' array, drawn once per process (about 20 MB in all) and read-only."""
    drawn = np.random.default_rng([20241201, seed, *shape]).uniform(-bound, bound, shape)
    drawn.flags.writeable = False
    return drawn


@functools.cache
def above_diagonal(t: int) -> np.ndarray:
    """(T, T): True where column j is after row i (j > i), entry by entry, so the kit holds no vectorised mask (read-only)."""
    above = np.array([[j > i for j in range(t)] for i in range(t)], dtype=bool)
    above.flags.writeable = False
    return above


def causal(scores: np.ndarray) -> np.ndarray:
    """The scores with -inf above the diagonal, as a masked head hands them to the softmax."""
    return np.where(above_diagonal(scores.shape[-1]), -np.inf, scores)


def head() -> tuple:
    """x (HEAD_BATCH, T, C) and the head's weights w_q, w_k (C, D) and w_v (C, D_V)."""
    return (
        values((HEAD_BATCH, T, C), 2.0),
        values((C, D), 0.3, 1),
        values((C, D), 0.3, 2),
        values((C, D_V), 0.3, 3),
    )


def at_scale(*make):
    """Decorate a drawn check: after Hypothesis' inputs pass, run it once on make's values (one per drawn argument).

    The small inputs come first, so a mistake they show is shown on the smallest input.
    """

    def decorate(test):
        inner = test.hypothesis.inner_test

        def check(submission):
            # Hypothesis' examples, replayed when a run before drew them
            replay.run(test, submission)
            submission.printed.new_example()
            try:
                with submission.workers.patient():
                    inner(submission, *(value() for value in make))
            except CheckFailed as failed:
                raise CheckFailed(f"{SAID}\n{failed}", mistake=failed.mistake) from None

        for name in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(check, name, getattr(test, name))
        check.drawn = test  # the Hypothesis test, for the seed (conftest.py)
        return check

    return decorate


def queries_and_keys() -> tuple:
    """q and k (B, T, D)."""
    return values((BATCH, T, D), 2.0), values((BATCH, T, D), 2.0, 1)


def scores(bound: float = 1e4) -> np.ndarray:
    """Scores (B, T, T)."""
    return values((BATCH, T, T), bound)


def masked(bound: float = 30.0) -> np.ndarray:
    """Masked scores (B, T, T): -inf above the diagonal."""
    return causal(scores(bound))


def softmax_grads(masked: bool = False) -> tuple:
    """x (B, T, T), -inf above the diagonal when masked, and d_shares shaped like it."""
    return causal(scores(3.0)) if masked else scores(3.0), values((BATCH, T, T), 2.0, 1)


def head_grads() -> tuple:
    """d_out (B, T, D_V) and a head's inputs."""
    return (values((HEAD_BATCH, T, D_V), 2.0, 4), *head())


def multi_head() -> tuple:
    """x, two heads' weights and w_o (2·D_V, C)."""
    x, *first = head()
    second = (values((C, D), 0.3, 5), values((C, D), 0.3, 6), values((C, D_V), 0.3, 7))
    return x, [tuple(first), second], values((2 * D_V, C), 0.1, 8)


def params_and_grads() -> tuple:
    """The attention model's parameters, gradients of the same names and shapes, and the comparison's lr."""
    params = {name: values(shape, 1.0, n) for n, (name, shape) in enumerate(PARAMS.items())}
    return (
        params,
        {name: values(shape, 1.0, 20 + n) for n, (name, shape) in enumerate(PARAMS.items())},
        LR,
    )


def as_compared() -> tuple[dict, dict]:
    """The attention model's parameters and gradients as `grader compare` hands them to sgd_step: float32, each dict in its model's order."""
    params = {
        name: values(shape, 1.0, n).astype(DTYPE) for n, (name, shape) in enumerate(PARAMS.items())
    }
    return params, {
        name: values(PARAMS[name], 0.2, 40 + n).astype(DTYPE) for n, name in enumerate(GRADS)
    }


def training_run() -> tuple:
    """The toy model's weights, STEPS + 2 batches of BATCH rows, STEPS and the comparison's lr."""
    params = {"w": values((C, 2), 0.3), "b": values((2,), 0.3)}
    # one draw each (2,004 took 0.06 s)
    xs, ys = (values((STEPS + 2, BATCH, C), 1.0, 1), values((STEPS + 2, BATCH, 2), 1.0, 2))
    return params, list(zip(xs, ys)), STEPS, LR


def warm() -> None:
    """Draw every value above once, for a process made ready ahead of its checks (0.03 s, which no check then pays)."""
    for make in (
        queries_and_keys,
        masked,
        softmax_grads,
        head_grads,
        multi_head,
        params_and_grads,
        training_run,
    ):
        make()
