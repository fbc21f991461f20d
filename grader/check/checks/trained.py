"""What the check of `train` knows without the student's code: the run by definition and the order the batches were used in."""

from grader.check.checks.harness import FORWARD
from grader.sandbox.toymodel import LinearModel

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
        fits = [j for j, (value, _) in enumerate(found) if abs(value - loss) <= FORWARD["atol"] + FORWARD["rtol"] * abs(loss)]
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
