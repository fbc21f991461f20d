"""The five exercises in lesson order: their functions, points and what they build on."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    """One module the student fills in."""

    name: str
    title: str
    points: float
    functions: tuple[str, ...]
    uses: tuple[str, ...] = ()  # earlier exercises whose functions this one calls


EXERCISES = (
    Exercise("scores", "attention scores q·k/√d", 15.0, ("attention_scores",)),
    Exercise("masking", "the causal mask", 15.0, ("causal_mask", "apply_causal_mask")),
    Exercise("softmax", "a stable softmax", 20.0, ("softmax",)),
    Exercise(
        "heads",
        "attention heads",
        20.0,
        ("attention_head", "multi_head_attention"),
        uses=("scores", "masking", "softmax"),
    ),
    Exercise(
        "training",
        "backward passes, the SGD step and the loop",
        30.0,
        ("softmax_backward", "attention_head_backward", "sgd_step", "train"),
        uses=("scores", "masking", "softmax"),
    ),
)

NAMES = tuple(exercise.name for exercise in EXERCISES)
BY_NAME = {exercise.name: exercise for exercise in EXERCISES}
