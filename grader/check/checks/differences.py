"""Central finite differences for the backward passes' public checks: the points moved a step each way, and the slopes found."""

import functools

import numpy as np

from grader.check.checks.harness import GRADIENT, expect_array, expect_close

STEP = 1e-5  # central differences: error about STEP² from the curvature, 1e-16/STEP from rounding
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
        blocks.append(
            [
                shifted if j == i else np.broadcast_to(other, (len(shifted),) + other.shape)
                for j, other in enumerate(points)
            ]
        )
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
    expect_close(
        along,
        slopes,
        f"{what} taken along a fixed random direction (the slope there)",
        inputs,
        GRADIENT,
    )
