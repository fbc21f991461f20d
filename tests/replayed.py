"""The known mistakes a report names, each with its own code, replayed against the code of the mutant it was said of.

A named mistake must be what the code does: its function gives the mutant's output on every input
tried here (the diagnosis' general input and inputs drawn as the checks draw them), not only on the
small input a message shows. The public checks name a few mistakes of their own, in words the
diagnosis does not hold; CODE gives those their code too.
"""

import copy
import importlib
import re
import shutil
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.check.checks import strategies as drawn
from grader.check.diagnosis import MISTAKES, PROBES
from grader.paths import SOLUTIONS_DIR
from solutions.softmax import softmax

NAMED = re.compile(
    r"This looks like (?:a known mistake|one of these known mistakes, alike on every input that failed here): (.+)\.$",
    re.M,
)


def namings(message: str) -> list[list[str]]:
    """Each naming in a message: the one mistake named, or the several named as alike."""
    return [found.split("; or ") for found in NAMED.findall(message)]


def _climbs(params, grads, lr):
    for name in params:
        params[name] = params[name] + lr * grads[name]


def _epsilon_below(epsilon: float):
    def wrong(x):
        with np.errstate(all="ignore"):
            e = np.exp(x - np.max(x, axis=-1, keepdims=True))
            return e / (np.sum(e, axis=-1, keepdims=True) + epsilon)

    return wrong


def code(name: str):
    """(function, its code) of a named mistake; None for a name no table holds."""
    for function, mistakes in MISTAKES.items():
        for said, wrong in mistakes:
            if said == name:
                return function, wrong
    if (
        name == "q·k divided by √T, the number of positions (here 1), instead of √d"
    ):  # the public check's words
        return code("q·k divided by √T, the number of positions, instead of √d")
    if name == "a step up the gradient (p + lr·g) instead of down":
        return "sgd_step", _climbs
    if found := re.match(r"a small number \(([0-9e.+-]+)\) added to the sum below the line", name):
        return "softmax", _epsilon_below(float(found.group(1)))
    return None


@st.composite
def _softmax_backward(draw):
    x = draw(drawn.softmax_inputs(bound=3.0))
    return softmax(x), drawn.fill(draw, x.shape, 2.0)


@st.composite
def _head_backward(draw):
    x, w_q, w_k, w_v = draw(drawn.head_inputs())
    return drawn.fill(draw, x.shape[:-1] + w_v.shape[-1:], 2.0), x, w_q, w_k, w_v


@st.composite
def _sgd(draw):
    shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple))
    return (
        {"w": drawn.fill(draw, shape), "b": drawn.fill(draw, shape[-1:])},
        {"w": drawn.fill(draw, shape), "b": drawn.fill(draw, shape[-1:])},
        0.1,
    )


INPUTS = {  # as the checks draw them, from a single entry per axis up
    "attention_scores": drawn.queries_and_keys(),
    "causal_mask": st.integers(1, 9).map(lambda t: (t,)),
    "apply_causal_mask": drawn.square_scores().map(lambda s: (s,)),
    "softmax": drawn.softmax_inputs(bound=1e4).map(lambda x: (x,)),
    "attention_head": drawn.head_inputs(),
    "multi_head_attention": drawn.multi_head_inputs(),
    "softmax_backward": _softmax_backward(),
    "attention_head_backward": _head_backward(),
    "sgd_step": _sgd(),
}


def mutant_module(mutant: Path, scratch: Path):
    """The mutant's module, imported from a package of the reference with the mutant in its place."""
    package = "replayed_" + re.sub(r"\W", "_", mutant.stem)
    folder = scratch / package
    shutil.copytree(
        SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True
    )
    exercise = mutant.stem.split("__")[0]
    shutil.copy(mutant, folder / f"{exercise}.py")
    (folder / "__init__.py").touch()
    sys.path.insert(0, str(scratch))
    try:
        return importlib.import_module(f"{package}.{exercise}")
    finally:
        sys.path.remove(str(scratch))


def _outcome(function: str, code, args: tuple):
    """What code gives on args: its value (multi_head_attention's out alone), or params after sgd_step; "raised" when it raises."""
    args = copy.deepcopy(args)
    try:
        with np.errstate(all="ignore"):
            value = code(*args)
    except Exception:  # noqa: BLE001  (a mutant that breaks on an input differs from a mistake that does not)
        return "raised"
    if function == "sgd_step":
        return args[0]
    if function == "multi_head_attention" and isinstance(value, tuple):
        return value[0]
    return value


def _same(a, b) -> bool:
    """Equal outcomes, arrays to rounding, NaN where NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        with np.errstate(all="ignore"):
            return a.shape == b.shape and bool(
                np.allclose(a.astype(float), b.astype(float), rtol=1e-6, atol=1e-9, equal_nan=True)
            )
    return type(a) is type(b) and a == b


def is_what_it_does(function: str, mistake, theirs) -> bool:
    """Whether the mistake's code gives the mutant's outcome on the general input and on 40 drawn ones."""
    probe = PROBES.get(function, lambda: None)()
    if probe is not None and not _same(
        _outcome(function, mistake, probe), _outcome(function, theirs, probe)
    ):
        return False
    agrees = True

    @settings(max_examples=40, deadline=None, derandomize=True, database=None)
    @given(INPUTS[function])
    def each(args):
        nonlocal agrees
        agrees = agrees and _same(
            _outcome(function, mistake, args), _outcome(function, theirs, args)
        )

    each()
    return agrees
