"""`grader hint EXERCISE [FUNCTION]`: a ladder of hints per function, from the idea to the shape of the numpy call."""

import shutil
import textwrap
from pathlib import Path

import click

from grader import kit
from grader.check.checks.harness import ARG_NAMES
from grader.check.report import submission_args
from grader.check.state import State, live_fingerprints, read_json, write_json
from grader.exercises import BY_NAME
from grader.style import paint, shown_command

HINTS_FILE = "hints.json"  # {exercise: {function: the last rung shown}}

LADDERS = {
    "scores": {
        "attention_scores": (
            "The idea: a score is a dot product. Query i and key j are both d numbers long; multiply them entry "
            "by entry and add up, and you have how well i matches j. Do that for every query against every key "
            "and you get a table with a row per query and a column per key, (T, S). Then divide the whole table "
            "by the square root of d.",
            "One matrix product computes every dot product at once: a (T, d) matrix times a (d, S) matrix is "
            "(T, S), and its entry [i, j] is row i of the first times column j of the second. So the keys have "
            "to stand on their side: (..., d, S) instead of (..., S, d).",
            "The shape of the call: the queries, the matrix product operator @, then the keys with their last two "
            "axes swapped, all divided by np.sqrt of d, where d is the size of the last axis of q. np.swapaxes "
            "takes the array and the two axes to swap, here -1 and -2; .T would reverse every axis, batch axes "
            "included.",
            "If the check says your values are off by a constant factor, look at the scaling: divide by the "
            "square root of d, not by d, and take d from q's last axis, not from the number of positions T.",
        ),
    },
    "masking": {
        "causal_mask": (
            "The idea: position i may look at position j only when j <= i. In a (T, T) table with a row per "
            "position i and a column per position j, those are the diagonal and everything below it. "
            "causal_mask is that table as True and False.",
            "numpy keeps the lower triangle of a matrix, the diagonal included, with np.tril, and zeroes the "
            "rest. Give it a (T, T) array of ones and you have the table's shape.",
            "The shape of the call: np.tril of np.ones with the shape (T, T). The result must have dtype bool: "
            "ask for dtype=bool when you build the ones, or convert the result with .astype and bool. A mask of "
            "1.0 and 0.0 floats is not a bool mask, and the check says so.",
        ),
        "apply_causal_mask": (
            "The idea: wherever position i would look ahead (j > i, where causal_mask says False) the score "
            "becomes minus infinity, so the softmax later gives that position a share of exactly 0. Every other "
            "score stays exactly as it was.",
            "np.where picks from two arrays by a condition, entry by entry, and returns a new array, so the "
            "caller's scores are left as they were. A (T, T) condition broadcasts over any batch axes in front.",
            "The shape of the call: np.where with three arguments: the condition (your causal_mask, with T read "
            "from the last axis of the scores), what to take where it is True (the scores) and what to take "
            "elsewhere (minus infinity, -np.inf).",
            "Three things the checks catch: assigning into scores[...] changes the caller's array (copy it "
            "first, or use np.where); T read from the first axis breaks for batched scores (..., T, T); and a "
            "large negative number such as -1e9 is not minus infinity.",
        ),
    },
    "softmax": {
        "softmax": (
            "The idea: make every score positive with exp, then divide each by its row's total, so the row adds "
            "up to 1. exp of minus infinity is exactly 0, so masked positions get a share of 0 without any "
            "special case.",
            "Stability: exp overflows to inf past about 709, and inf / inf is NaN. Subtracting the same number c "
            "from every entry of a row does not change its softmax (exp(-c) cancels above and below the line), "
            "so subtract the row's largest entry first: then the largest exp is exactly 1 and the row's total "
            "is at least 1.",
            "The shape of the calls: the row's maximum and the row's sum are both taken along axis=-1 with "
            "keepdims=True, which gives (..., 1) and broadcasts back against the (..., S) row. Three steps: shift "
            "by the maximum, exponentiate, divide by the sum.",
            "If the check shows NaN or a warning: take the maximum per row, not over the whole array (one large "
            "row would push every other row's exp to 0, and 0 / 0 is NaN), and build a new array rather than "
            "subtracting into x in place.",
        ),
    },
    "heads": {
        "attention_head": (
            "The idea: a head gives each position three vectors, its query, key and value, each the input row "
            "times a weight matrix. The masked softmax of the scores says how much of each earlier position's "
            "value to take; a position's output is that weighted sum of values.",
            "In order: queries, keys and values are x @ each weight, (..., T, d) and (..., T, d_v); then your "
            "attention_scores of the queries and keys, your apply_causal_mask, your softmax: the shares, "
            "(..., T, T). The output is the shares times the values, (..., T, d_v).",
            "The shape of the calls: three products x @ w_q, x @ w_k, x @ w_v; your three functions one after "
            "the other, the mask before the softmax; one more @ of the shares and the values. Return the pair "
            "(out, shares), out first.",
            "If heads fails only because an earlier exercise does, the report says so: in the full kit heads is "
            "checked with the reference scores, mask and softmax, so fix the earlier exercise first.",
        ),
        "multi_head_attention": (
            "The idea: several heads look at the same input side by side. Each gives d_v numbers per position; "
            "placed next to each other they are H * d_v numbers per position, and w_o mixes them into C_out.",
            "Call your attention_head once per (w_q, w_k, w_v) in the order given, keeping each output and each "
            "shares. Joining the outputs along the last axis gives (..., T, H * d_v); that times w_o is "
            "(..., T, C_out).",
            "The shape of the calls: np.concatenate of the list of outputs with axis=-1, then @ w_o. Return the "
            "pair (out, the list of the shares), the shares in the order of the heads.",
            "What the checks catch: joining along another axis stacks positions or batches instead of placing "
            "the heads side by side; the heads out of order; the shares as an array rather than a list. The "
            "check compares with your own attention_head, so make its checks pass first.",
        ),
    },
    "training": {
        "softmax_backward": (
            "The idea: you are given how the loss changes with each share (d_shares) and want how it changes "
            "with each input x. The shares of a row always add up to 1, so moving one x_j moves every share of "
            "its row: each entry of the answer collects from the whole row.",
            "The formula, for one row: the gradient at j is s_j times (d_s_j minus the row's sum over k of d_s_k "
            "times s_k). That sum is one number per row, the same for every j.",
            "The shape of the calls: the elementwise product of shares and d_shares, summed along axis=-1 with "
            "keepdims=True, is (..., 1); subtract it from d_shares (it broadcasts back to (..., S)) and multiply "
            "elementwise by the shares. A masked entry has share 0, so its gradient is 0 by itself.",
        ),
        "attention_head_backward": (
            "The idea: a backward pass runs the forward pass in reverse. Redo the forward pass keeping q, k, v "
            "and the shares; then, for each array on the way back, find the loss's gradient with respect to it, "
            "which has that array's shape.",
            "The last steps first. out is the shares times v: d_v (..., T, d_v) is the shares with their last two "
            "axes swapped times d_out, and d_shares (..., T, T) is d_out times v swapped. d_scores is your "
            "softmax_backward of the shares and d_shares; masked entries get 0 by themselves.",
            "The scores are q times k swapped, over the square root of d: divide d_scores by it, then d_q is "
            "d_scores times k and d_k is d_scores swapped times q. Each of q, k, v is x times its weight, so d_x "
            "adds three paths: d_q, d_k and d_v, each times its weight transposed.",
            "The weight gradients sum over every position of every batch: reshape x to (-1, C) and d_q to "
            "(-1, d); the first transposed times the second is (C, d), like w_q; the same for w_k and w_v. "
            "Return (d_x, d_w_q, d_w_k, d_w_v) in that order.",
        ),
        "sgd_step": (
            "The idea: a gradient points uphill, the way the loss grows fastest, so each weight takes a small "
            "step the other way: p minus lr times g, for every name in params.",
            "sgd_step returns None: it changes the dict it was given. Go over the names of params and store, "
            "under each name, the parameter minus lr times its gradient: a new array in the dict, or the same "
            "array changed in place with -=. The gradients stay as they were.",
            "What the check catches: adding instead of subtracting (a step up the gradient), returning a new "
            "dict while params stays unchanged, and changing grads.",
        ),
        "train": (
            "The idea: the loop repeats three things, steps times: take the next (x, y) batch, ask the model for "
            "its loss and gradients, and move the weights with your sgd_step. The losses, one per step, show "
            "the learning.",
            "One step: next of the batches iterator gives one pair; model.loss_and_grads of x and y gives "
            "(loss, grads); your sgd_step with model.params, grads and lr moves the weights. Keep the loss "
            "measured before the step.",
            "The shape of the loop: a list, and steps rounds that each take exactly one batch and append float "
            "of the loss; return the list. What the check catches: one batch for every step or several per "
            "step, numpy numbers instead of Python floats, and a copy of params passed to sgd_step, so the "
            "model never changes.",
        ),
    },
}


def hint(exercise: str, function: str | None = None, submission: Path | None = None) -> int:
    """Show one function's hints up to one more than before; 0 once shown, 2 for a bad folder, exercise or function."""
    from grader.student.status import resolve, shown, unknown_function

    folder = resolve(submission, "give a hint")
    if folder is None:
        return 2
    if exercise not in LADDERS:
        click.echo(
            f"There is no exercise {exercise!r}: choose one of {', '.join(LADDERS)}.", err=True
        )
        return 2
    if unknown_function(exercise, function):
        return 2
    stuck = None if function else stuck_on(folder, exercise)
    function = function or stuck or BY_NAME[exercise].functions[0]
    ladder = LADDERS[exercise][function]
    places = {
        name: kept
        for name, kept in (read_json(folder, HINTS_FILE) or {}).items()
        if isinstance(kept, dict)
    }
    mine = places.get(exercise, {})
    before = mine.get(function) if type(mine.get(function)) is int else 0
    before = min(max(before, 0), len(ladder))
    rung = min(before + 1, len(ladder))
    remembered = write_json(folder, HINTS_FILE, {**places, exercise: {**mine, function: rung}})
    passed_note(folder, exercise)
    if stuck:
        click.echo(
            f"{function} is the first function of {exercise} that your last check did not pass."
        )
    where = submission_args(folder, False)
    click.echo(
        ladder_text(
            exercise,
            function,
            rung,
            done=before >= len(ladder),
            file=f"{shown(folder)}{exercise}.py",
            where=where,
        )
    )
    if not remembered:
        click.echo(
            f"(Your place on the ladder could not be saved in {folder / '.grader'}.)", err=True
        )
    return 0


def ladder_text(
    exercise: str, function: str, rung: int, done: bool, file: str, where: tuple[str, ...] = ()
) -> str:
    """The rungs up to this one, earlier ones dim, and what comes after; where names the folder in the commands shown."""
    ladder = LADDERS[exercise][function]
    width = min(88, shutil.get_terminal_size((88, 24)).columns) - 4
    lines = [
        paint(
            f"Hint {rung} of {len(ladder)} for {exercise}: {function}({', '.join(ARG_NAMES[function])})",
            bold=True,
        )
    ]
    for number in range(1, rung + 1):
        text = textwrap.fill(
            ladder[number - 1], width, initial_indent=f"  {number}. ", subsequent_indent="     "
        )
        lines.append(text if number == rung and not done else paint(text, dim=True))
    lines.append("")
    functions = BY_NAME[exercise].functions
    again = ("hint", exercise) + ((function,) if len(functions) > 1 else ()) + where
    if rung < len(ladder):
        told = f"Still stuck? {shown_command(*again)} again gives hint {rung + 1}."
    else:
        told = (
            f"That was the last hint for {function}. Its docstring in {file} states the spec and the formula, "
            f"and the top of the file says what it is for; {shown_command('try', exercise, function, *where)} runs "
            f"it in this terminal, where print() and breakpoint() work, on the input of the check it last failed (or "
            f"a small example) beside what it should give, and {shown_command('check', exercise, *where)} shows "
            "the smallest input each failing check found."
        )
    lines.append(textwrap.fill(told, width + 4, break_on_hyphens=False, break_long_words=False))
    others = [name for name in functions if name != function]
    if others:
        listed = " or ".join(filter(None, [", ".join(others[:-1]), others[-1]]))
        told = f"The other functions of {exercise} have ladders of their own: {shown_command('hint', exercise, 'FUNCTION', *where)}"
        told += f" with FUNCTION {listed}."
        lines.append(textwrap.fill(told, width + 4, break_on_hyphens=False, break_long_words=False))
    return "\n".join(lines)


def stuck_on(folder: Path, exercise: str) -> str | None:
    """The first function of the exercise that the last saved verdict, even of files changed since, does not pass."""
    verdict = State.load(folder).last().get(exercise)
    if verdict is None:
        return None
    passes: dict[str | None, bool] = {}
    for check in verdict.checks:
        about = about_function(check)
        passes[about] = passes.get(about, True) and check.status == "passed"
    return next((name for name in BY_NAME[exercise].functions if not passes.get(name, False)), None)


def about_function(check) -> str | None:
    """The function of its exercise a saved check is about: the one it failed on, else the last of those it called."""
    if check.blamed_function in check.calls:  # "sgd_step changed its input grads['w']; ..."
        return check.blamed_function
    return check.calls[-1] if check.calls else None


def passed_note(folder: Path, exercise: str) -> None:
    """Say so when the last verdict of unchanged files already passed this exercise."""
    verdict = State.load(folder).fresh(live_fingerprints(folder)).get(exercise)
    if verdict is not None and verdict.status == "passed":
        which = (
            "public check (the hidden ones run when your work is graded)"
            if kit.is_student_kit()
            else "check"
        )
        click.echo(
            paint(
                f"{exercise} already passes every {which}; here is the next hint all the same.",
                fg="green",
            )
        )
