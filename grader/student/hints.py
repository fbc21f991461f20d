"""`grader hint EXERCISE`: a ladder of hints, from the idea to the shape of the numpy call."""

import shutil
import textwrap
from pathlib import Path

import click

from grader import kit
from grader.check.cache import cached_report, read_json, write_json
from grader.exercises import BY_NAME
from grader.style import paint, shown_command

HINTS_FILE = "hints.json"

LADDERS = {
    "scores": (
        "The idea: a score is a dot product. Query i and key j are both d numbers long; multiply "
        "them entry by entry and add up, and you have how well i matches j. Do that for every "
        "query against every key and you get a table with a row per query and a column per key, "
        "(T, S). Then divide the whole table by the square root of d.",
        "One matrix product computes every dot product at once: a (T, d) matrix times a (d, S) "
        "matrix is (T, S), and its entry [i, j] is row i of the first times column j of the second. "
        "So the keys have to stand on their side: (..., d, S) instead of (..., S, d).",
        "The shape of the call: the queries, the matrix product operator @, then the keys with "
        "their last two axes swapped, all divided by np.sqrt of d, where d is the size of the last "
        "axis of q. np.swapaxes takes the array and the two axes to swap, here -1 and -2; .T would "
        "reverse every axis, batch axes included.",
        "If the check says your values are off by a constant factor, look at the scaling: divide by "
        "the square root of d, not by d, and take d from q's last axis, not from the number of "
        "positions T.",
    ),
    "masking": (
        "The idea: position i may look at position j only when j <= i. In a (T, T) table with a row "
        "per position i and a column per position j, those are the diagonal and everything below "
        "it. causal_mask is that table as True/False; apply_causal_mask puts minus infinity "
        "wherever the table says False, so the softmax later gives those positions nothing.",
        "causal_mask: numpy keeps the lower triangle of a matrix with np.tril. Give it a (T, T) "
        "array of ones and you have the shape; the result must have dtype bool, so ask for bool "
        "when you build the ones or convert the result with .astype.",
        "apply_causal_mask: np.where takes three arguments: a condition (your causal_mask, with T "
        "read from the last axis of the scores), what to take where the condition is True (the "
        "scores) and what to take elsewhere (minus infinity, -np.inf). It returns a new array, and "
        "a (T, T) condition broadcasts over any batch axes in front.",
        "Two things the checks catch: assigning into scores[...] changes the caller's array (the "
        "input must be left as it was), and a mask of 1.0 and 0.0 floats is not a bool mask.",
    ),
    "softmax": (
        "The idea: make every score positive with exp, then divide each by its row's total, so "
        "the row adds up to 1. exp of minus infinity is exactly 0, so masked positions get a "
        "share of 0 without any special case.",
        "Stability: exp overflows to inf past about 709, and inf / inf is NaN. Subtracting the "
        "same number c from every entry of a row does not change its softmax (exp(-c) cancels "
        "above and below the line), so subtract the row's largest entry first: then the largest "
        "exp is exactly 1 and the row's total is at least 1.",
        "The shape of the calls: the row's maximum and the row's sum are both taken along "
        "axis=-1 with keepdims=True, which gives (..., 1) and broadcasts back against the "
        "(..., S) row. Three steps: shift by the maximum, exponentiate, divide by the sum.",
        "If the check shows NaN or a warning: take the maximum per row, not over the whole array "
        "(one large row would push every other row's exp to 0, and 0 / 0 is NaN), and build a new "
        "array rather than subtracting into x in place.",
    ),
    "heads": (
        "The idea: a head gives each position three vectors, its query, key and value, each the "
        "input row times a weight matrix. The masked softmax of the scores says how much of each "
        "earlier position's value to take; a position's output is that weighted sum of values.",
        "attention_head in order: queries, keys and values are x @ each weight, (..., T, d) and "
        "(..., T, d_v); then your attention_scores of the queries and keys, your "
        "apply_causal_mask, your softmax: the shares, (..., T, T). The output is the shares times "
        "the values, (..., T, d_v). Return the pair (out, shares).",
        "multi_head_attention: call attention_head once per (w_q, w_k, w_v) in the given order, "
        "keeping each output and each shares. np.concatenate of the list of outputs with axis=-1 "
        "puts them side by side, (..., T, H * d_v); that times w_o is (..., T, C_out). Return the "
        "pair (out, list of the shares).",
        "If heads fails only because an earlier exercise does, the report says so: heads is "
        "checked with the reference scores, mask and softmax, so fix the earlier one first. "
        "Otherwise check the order of the heads and that the shares come back as a list.",
    ),
    "training": (
        "The idea: a backward pass runs the forward pass in reverse. For every intermediate array "
        "you want the loss's gradient with respect to it, which has that array's shape; each step "
        "back multiplies by how that step's output changes with its input. sgd_step and train are "
        "the short part: move each weight against its gradient, and repeat.",
        "softmax_backward: for one row, the gradient at j is s_j times (d_s_j minus the row's sum "
        "of d_s times s). That sum is one number per row: a sum along axis=-1 with keepdims=True, "
        "(..., 1), then elementwise products broadcast it back to (..., S).",
        "attention_head_backward: redo the forward pass keeping q, k, v and the shares. Going back, "
        "each gradient has the shape of what it is for: d_v (..., T, d_v) comes from the shares "
        "with their last two axes swapped times d_out; d_shares (..., T, T) from d_out times v "
        "swapped; d_scores through your softmax_backward, divided by the square root of d; d_q "
        "and d_k from d_scores and k, and d_scores swapped and q. d_x adds the three paths back "
        "through w_q, w_k and w_v (each weight transposed).",
        "The weight gradients sum over every position of every batch: reshape x to (-1, C) and the "
        "gradient to (-1, d), and the transposed first times the second is (C, d). sgd_step: for "
        "every name, the parameter minus lr times its gradient, stored back under that name. train: "
        "for each step take the next pair from the iterator, ask the model for its loss and "
        "gradients, step with your sgd_step on the model's params, and keep the loss as a Python float.",
    ),
}

LESSON = {
    "scores": "scaled dot-product scores",
    "masking": "the causal mask",
    "softmax": "the stable softmax",
    "heads": "attention heads",
    "training": "backpropagation through a head",
}


def hint(exercise: str, submission: Path | None = None) -> int:
    """Show the hints of an exercise up to one more than before; 0 once shown, 2 for a bad folder."""
    from grader.student.status import resolve, shown

    folder = resolve(submission, "give a hint")
    if folder is None:
        return 2
    if exercise not in LADDERS:
        click.echo(f"There is no exercise {exercise!r}: choose one of {', '.join(LADDERS)}.", err=True)
        return 2
    ladder = LADDERS[exercise]
    seen = read_json(folder, HINTS_FILE) or {}
    before = seen.get(exercise) if isinstance(seen.get(exercise), int) else 0
    before = min(max(before, 0), len(ladder))
    rung = min(before + 1, len(ladder))
    remembered = write_json(folder, HINTS_FILE, {**seen, exercise: rung})
    passed_note(folder, exercise)
    click.echo(ladder_text(exercise, rung, done=before >= len(ladder), file=f"{shown(folder)}{exercise}.py"))
    if not remembered:
        click.echo(f"(Your place on the ladder could not be saved in {folder / '.grader'}.)", err=True)
    return 0


def ladder_text(exercise: str, rung: int, done: bool, file: str) -> str:
    """The rungs up to this one, earlier ones dim, and what comes after."""
    ladder = LADDERS[exercise]
    width = min(88, shutil.get_terminal_size((88, 24)).columns) - 4
    lines = [paint(f"Hint {rung} of {len(ladder)} for {exercise} ({BY_NAME[exercise].title}):", bold=True)]
    for number in range(1, rung + 1):
        text = textwrap.fill(ladder[number - 1], width, initial_indent=f"  {number}. ", subsequent_indent="     ")
        lines.append(text if number == rung and not done else paint(text, dim=True))
    lines.append("")
    if rung < len(ladder):
        lines.append(f"Still stuck? {shown_command('hint', exercise)} again gives hint {rung + 1}.")
    else:
        last = (
            f"That was the last hint for {exercise}. The docstrings in {file} state the spec and the "
            f"formula; the lesson's notes on {LESSON[exercise]} go through it step by step, and "
            f"{shown_command('check', exercise)} shows the smallest input your code gets wrong."
        )
        lines.append(textwrap.fill(last, width + 4))
    return "\n".join(lines)


def passed_note(folder: Path, exercise: str) -> None:
    """Say so when the last verdict of unchanged files already passed this exercise."""
    report = cached_report(folder, [exercise])
    if report is not None and report.exercises[0].status == "passed":
        which = "public check (the hidden ones run when your work is graded)" if kit.is_student_kit() else "check"
        click.echo(paint(f"{exercise} already passes every {which}; here is the next hint all the same.", fg="green"))
