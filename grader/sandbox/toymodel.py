"""The kit's stand-ins for calling `train`: a tiny deterministic model and a batch feed."""

import numpy as np


class LinearModel:
    """Least squares on a linear map: params {"w": (C, O), "b": (O,)}, loss the mean squared error."""

    def __init__(self, params):
        self.params = params

    def loss_and_grads(self, x, y):
        """The loss on one batch, x (N, C) and y (N, O), and its gradient for every parameter."""
        err = x @ self.params["w"] + self.params["b"] - y  # (N, O)
        d_err = 2.0 * err / err.size  # (N, O)
        return np.mean(err**2), {"w": x.T @ d_err, "b": d_err.sum(axis=0)}


TAKEN = "batches.taken"  # what a BatchFeed tells the grader, which counts the batches on its own side


class BatchFeed:
    """An iterator over (x, y) pairs; each batch taken is told to the grader (tell), which keeps the count that is graded.

    taken here is the worker's own tally, for the codec; student code could change it, so no check reads it.
    """

    tell = None  # set by the worker's channel: tells the grader that one more batch was taken

    def __init__(self, pairs):
        self.pairs = list(pairs)
        self.taken = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.taken >= len(self.pairs):
            raise StopIteration
        if BatchFeed.tell is not None:
            BatchFeed.tell()
        self.taken += 1
        return self.pairs[self.taken - 1]
