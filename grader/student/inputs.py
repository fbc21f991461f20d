"""The student's own input for `grader try --input NAME=EXPR`: read, named, and its shapes checked before the call."""

import click
import numpy as np

from grader.check.checks.harness import ARG_NAMES


def read_inputs(given: tuple, function: str) -> dict | None:
    """{argument name: value} from NAME=EXPR items (numpy as np), or None after saying what is wrong."""
    inputs = {}
    for item in given:
        name, _, text = item.partition("=")
        if name.strip() not in ARG_NAMES[function] or not text.strip():
            click.echo(
                f"--input {item!r}: write NAME=EXPR with NAME one of {', '.join(ARG_NAMES[function])}, "
                "for example --input 'x=np.array([[1.0, 2.0, -np.inf]])'.",
                err=True,
            )
            return None
        try:
            # the student's own expression, on their own machine
            value = eval(text, {"np": np, "__builtins__": {}})
        except Exception as error:  # noqa: BLE001  (any mistake in the expression is theirs to see)
            click.echo(
                f"--input {item!r}: the expression could not be read ({type(error).__name__}: {error}).",
                err=True,
            )
            return None
        inputs[name.strip()] = (
            np.asarray(value, dtype=float)
            if isinstance(value, (list, int, float)) and name.strip() != "T"
            else value
        )
    return inputs


def shape_problem(function: str, named: dict) -> str | None:
    """Why these arrays cannot go together into the function (sizes that disagree), or None."""
    shapes = {
        name: np.shape(value) for name, value in named.items() if isinstance(value, np.ndarray)
    }

    def size(name: str, axis: int):
        shape = shapes.get(name, ())
        return shape[axis] if len(shape) >= abs(axis) else None

    rules = {  # (name, axis, name, axis, what must agree)
        "attention_scores": [("q", -1, "k", -1, "q and k need the same last size d")],
        "apply_causal_mask": [
            ("scores", -1, "scores", -2, "scores must be square in its last two axes (T, T)")
        ],
        "attention_head": [
            ("x", -1, "w_q", -2, "x's last size C must be w_q's rows"),
            ("x", -1, "w_k", -2, "x's last size C must be w_k's rows"),
            ("x", -1, "w_v", -2, "x's last size C must be w_v's rows"),
            ("w_q", -1, "w_k", -1, "w_q and w_k need the same number of columns d"),
        ],
        "softmax_backward": [
            ("shares", -1, "d_shares", -1, "shares and d_shares need the same shape")
        ],
    }
    for one, i, other, j, rule in rules.get(function, []):
        a, b = size(one, i), size(other, j)
        if a is not None and b is not None and a != b:
            listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
            return f"these inputs do not fit together: {rule} (the shapes are {listed})"
    if function == "softmax_backward" and shapes.get("shares") != shapes.get("d_shares"):
        return f"these inputs do not fit together: shares and d_shares need the same shape (they are {shapes.get('shares')} and {shapes.get('d_shares')})"
    return None
