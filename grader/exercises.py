"""The five exercises in lesson order: their functions, points and what they build on."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    """One module the student fills in.

    shares: the points of each function, in the order of functions; they add up to points. A
    function earns its share by the share of its own checks that pass (grader.check.results).
    """

    name: str
    title: str
    points: float
    functions: tuple[str, ...]
    shares: tuple[float, ...]
    uses: tuple[str, ...] = ()  # earlier exercises whose functions this one calls

    def __post_init__(self):
        if len(self.shares) != len(self.functions) or sum(self.shares) != self.points:
            raise ValueError(
                f"{self.name}: the shares {self.shares} must give each of {self.functions} its points, {self.points:g} in all"
            )

    def share(self, function: str) -> float:
        """The points of one of the exercise's functions."""
        return self.shares[self.functions.index(function)]


EXERCISES = (
    Exercise("scores", "attention scores q·k/√d", 15.0, ("attention_scores",), (15.0,)),
    Exercise("masking", "the causal mask", 15.0, ("causal_mask", "apply_causal_mask"), (5.0, 10.0)),
    Exercise("softmax", "a stable softmax", 20.0, ("softmax",), (20.0,)),
    Exercise(
        "heads",
        "attention heads",
        20.0,
        ("attention_head", "multi_head_attention"),
        (12.0, 8.0),
        uses=("scores", "masking", "softmax"),
    ),
    Exercise(
        "training",
        "backward passes, the SGD step and the loop",
        30.0,
        ("softmax_backward", "attention_head_backward", "sgd_step", "train"),
        (6.0, 12.0, 4.0, 8.0),
        uses=("scores", "masking", "softmax"),
    ),
)

# A function that may call an earlier one of its own exercise, as its docstring suggests: a failure of its checks
# may come from that one (grader.check.checks.judged says which, by running the check again with the reference's).
BUILDS_ON = {
    "apply_causal_mask": "causal_mask",
    "multi_head_attention": "attention_head",
    "attention_head_backward": "softmax_backward",
    "train": "sgd_step",
}

NAMES = tuple(exercise.name for exercise in EXERCISES)
BY_NAME = {exercise.name: exercise for exercise in EXERCISES}
MODULE_OF = {function: exercise.name for exercise in EXERCISES for function in exercise.functions}
