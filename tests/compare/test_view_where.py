"""compare's words: the gate names an earlier exercise as the cause, the table shows the loss at the decision character."""

import math

from grader.check.results import ExerciseResult
from grader.compare import view


def test_the_gate_names_the_earlier_exercise_as_the_cause():
    left = [
        ExerciseResult("masking", "error", 0.0, 15.0, []),
        ExerciseResult("heads", "error", 0.0, 20.0, []),
    ]
    said = view.locked(left)
    assert (
        "heads: crashes or cannot be imported (it uses masking, listed here too: fix masking first)"
        in said
    )
    assert "masking: crashes or cannot be imported\n" in said


def test_the_table_shows_the_loss_at_the_decision_beside_the_loss_over_every_character():
    figures = {
        "p_decision": 0.5,
        "correct_replies": 40,
        "sampled_replies": 100,
        "final_loss": 0.143,
        "steps": 10,
        "train_seconds": 1.0,
    }
    result = {
        "seed": 1,
        "seconds": 3.0,
        "models": {"mlp": dict(figures), "attention": dict(figures, final_loss=0.135)},
    }
    models = {"mlp": {"decision_probs": [0.5, 0.5]}, "attention": {"decision_probs": [0.9, 0.8]}}
    table = view.table(result, models)
    line = next(row for row in table.splitlines() if row.startswith("loss at the decision"))
    # every title apart from its figures
    assert all(len(row.split("  ")[0]) < 40 for row in table.splitlines()[3:])
    assert f"{-math.log(0.5):.3f}" in line and f"{-(math.log(0.9) + math.log(0.8)) / 2:.3f}" in line
    # without the models' events, no such row
    assert "loss at the decision" not in view.table(result)
