"""What the check of `train` knows without the student's code: the run by definition, the batches as shown, the order used."""

import numpy as np

from grader.check.checks.harness import FORWARD
from grader.sandbox.worker.toymodel import LinearModel

SHOWN_CHARS = 390  # a failure message shows a value's text up to 400 characters (harness.show)
REPLAYED = 20_000  # losses computed at most to find the order of a run's batches: the small runs, not the comparison's


def by_definition(params: dict, pairs: list, steps: int, lr: float) -> tuple[list, dict]:
    """The toy model's losses and final weights after `steps` steps of p - lr·g, one batch each, in order."""
    toy, trail = LinearModel(dict(params)), []
    for x, y in pairs[:steps]:
        value, gradient = toy.loss_and_grads(x, y)
        trail.append(value)
        toy.params = {name: toy.params[name] - lr * gradient[name] for name in toy.params}
    return trail, toy.params


def order_used(params: dict, pairs: list, losses: list, lr: float) -> list[int] | None:
    """Which pair (0-based, as given) each step's loss was measured on, found by replaying p - lr·g from the start.

    Where two pairs give the same loss the one of the given order is taken; None when a loss fits no pair,
    or the run is too long to replay.
    """
    if len(pairs) * len(losses) > REPLAYED:
        return None
    toy, used = LinearModel(dict(params)), []
    for step, loss in enumerate(losses):
        found = [toy.loss_and_grads(x, y) for x, y in pairs]
        fits = [
            j
            for j, (value, _) in enumerate(found)
            if abs(value - loss) <= FORWARD["atol"] + FORWARD["rtol"] * abs(loss)
        ]
        if not fits:
            return None
        used.append(step if step in fits else fits[0])
        toy.params = {name: toy.params[name] - lr * found[used[-1]][1][name] for name in toy.params}
    return used


def order_note(order: list[int] | None) -> str | None:
    """What the order the losses show says, when it is not one pair per step in the order given."""
    if order is None or order == list(range(len(order))):
        return None
    said = ", ".join(str(j + 1) for j in order)
    given = ", ".join(str(j + 1) for j in range(len(order)))
    if sorted(order) == list(range(len(order))):
        how = "the same pairs in another order: use each pair as you take it, with next(batches) once per step (no reversed, sorted or shuffle)."
    elif len(set(order)) < len(order):
        how = "some pair more than once: take a new pair with next(batches) at every step, and use it for that step only."
    else:
        how = "other pairs than the first ones: take the next pair with next(batches) at every step, and use it for that step."
    return (
        f"  The losses show which (x, y) pair each step used: pairs {said}, numbered as batches gave them; "
        f"one pair per step in the order given is {given}. Your train used {how}"
    )


class Pairs:
    """The (x, y) pairs of a train call as a failure message shows them: numbered, with how many train took."""

    def __init__(self, pairs: list, taken: int, listed: bool):
        self.pairs, self.taken, self.listed = pairs, taken, listed

    def __repr__(self):
        x, y = self.pairs[0]
        head = f"{len(self.pairs)} (x, y) pairs, in the order batches gives them; train took {self.taken or 'none'} of them"
        if not self.listed:
            return f"{head}; each x of shape {x.shape}, each y of shape {y.shape}"
        lines = [head + ":"]
        for n, (x, y) in enumerate(self.pairs, 1):
            line = f"  {n}: x = {_one_line(x)}, y = {_one_line(y)}"
            if sum(len(text) + 1 for text in lines) + len(line) > SHOWN_CHARS - 40:
                lines.append(
                    f"  ... and {len(self.pairs) - n + 1} more, x of shape {x.shape}, y of shape {y.shape}"
                )
                break
            lines.append(line)
        return "\n".join(lines)


def _one_line(value: np.ndarray) -> str:
    """A small array on one line."""
    return " ".join(
        np.array2string(value, precision=6, separator=", ", max_line_width=10_000).split()
    )
