"""The guides a student reads say what the registry says: each exercise's points and each function's share."""

import pytest

from grader.exercises import EXERCISES
from grader.paths import KIT_ROOT


@pytest.mark.parametrize("guide", ["README.md", "docs/students.md"])
def test_the_guides_table_gives_each_function_its_share(guide):
    """The points table a student reads is the registry's: each exercise's points and each function's share."""
    text = (KIT_ROOT / guide).read_text(encoding="utf-8")
    for exercise in EXERCISES:
        shares = ", ".join(f"`{f}` {s:g}" for f, s in zip(exercise.functions, exercise.shares))
        assert f"| `{exercise.name}.py` | {shares} | {exercise.points:g} |" in text, exercise.name
