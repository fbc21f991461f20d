"""The mutants no check can fail because they are right, each with its reason and the run beside the reference that shows it.

A differential run calls every function of the mutant's module and the reference's on the same
inputs (inputs.py: small to the comparison's sizes, extremes included), each input twice in one
process, one after another, so state kept across calls shows. What each call returns and what it
leaves of its arguments are compared: exactly (type, dtype, shape, every value, NaN where NaN),
within a stated tolerance for a change of the last digits, or, for the dict of parameters a
function updates, by name (its order is no part of its contract).
"""

import copy
import importlib.util
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import inputs
import numpy as np
from mutants import Mutant, write

from grader.exercises import BY_NAME
from grader.paths import SOLUTIONS_DIR


@dataclass(frozen=True)
class Equivalence:
    reason: str
    rtol: float = 0.0  # 0: exact; else entries within rtol of the largest entry of their array
    by_name: bool = False  # dicts compared by name, their order not


SQUARE = "scores are (..., T, T) (the docstring), so shape[-2] is shape[-1]"
NEGATIVE = "numpy's reshape reads any negative size as the one to infer, as it reads -1 (numpy 2.4)"
TWO_D = "the array is 2-D (a weight, or rows reshaped to (N, C)), where .T and np.swapaxes(a, -1, -2) are the same"
EPSILON = "1e-9 added to √d scales the result by 1/(1 + 1e-9/√d), a change of 1e-9 of every entry: below any tolerance and float32's digits"
ORDER = "sgd_step and train change params by name ('afterwards params[name] holds p - lr·g'); the comparison reads them by name"

EQUIVALENT = {
    "scores:EpsilonAdded:0": Equivalence(EPSILON, rtol=2e-9),
    "masking:ReplaceUnaryOperator_USub_Invert:0": Equivalence(SQUARE),
    "masking:NumberReplacer:0": Equivalence(SQUARE),
    "training:ReplaceUnaryOperator_USub_Invert:8": Equivalence(NEGATIVE),
    "training:ReplaceUnaryOperator_USub_Invert:10": Equivalence(NEGATIVE),
    "training:ReplaceUnaryOperator_USub_Invert:12": Equivalence(NEGATIVE),
    "training:ReplaceUnaryOperator_USub_Invert:14": Equivalence(NEGATIVE),
    "training:NumberReplacer:16": Equivalence(NEGATIVE),
    "training:NumberReplacer:20": Equivalence(NEGATIVE),
    "training:NumberReplacer:24": Equivalence(NEGATIVE),
    "training:NumberReplacer:28": Equivalence(NEGATIVE),
    "training:TForSwapaxes:3": Equivalence(TWO_D),
    "training:TForSwapaxes:4": Equivalence(TWO_D),
    "training:TForSwapaxes:5": Equivalence(TWO_D),
    "training:TForSwapaxes:6": Equivalence(TWO_D),
    "training:TForSwapaxes:7": Equivalence(TWO_D),
    "training:TForSwapaxes:8": Equivalence(TWO_D),
    "training:InPlaceForCopy:3": Equivalence(
        "sgd_step may update each array in place or replace it ('either replace each entry of the dict with a new array or "
        "update the array in place'): np.subtract(p, lr·g, out=p) gives p - lr·g, as its dtype holds it"
    ),
    "training:ContainerReordered:0": Equivalence(ORDER, by_name=True),
    "training:ContainerReordered:2": Equivalence(ORDER, by_name=True),
    "training:EpsilonAdded:0": Equivalence(
        "1e-9 added to √d scales the scores' gradient by 1/(1 + 1e-9/√d): a change of 1e-9 of d_q and d_k, and of their share of d_x",
        rtol=2e-9,
    ),
}


def load(folder: Path, package: str) -> dict:
    """The five modules of folder imported as a package of this name: module name -> module."""
    spec = importlib.util.spec_from_file_location(
        package, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    sys.modules[package] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules[package])
    return {name: importlib.import_module(f"{package}.{name}") for name in BY_NAME}


def differs(a, b, rule: Equivalence, path: str = "") -> str | None:
    """Where b differs from a under the rule, in words; None when they agree."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"{path}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if rule.rtol and a.dtype.kind == "f":
            finite = np.isfinite(a)
            scale = float(np.max(np.abs(a[finite]), initial=0.0))
            same = np.array_equal(np.isfinite(b), finite) and np.array_equal(
                a[~finite], b[~finite], equal_nan=True
            )
            close = bool(np.all(np.abs(a[finite] - b[finite]) <= rule.rtol * scale))
            return (
                None
                if same and close
                else f"{path}: values differ beyond {rule.rtol:g} of the largest"
            )
        return (
            None
            if np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
            else f"{path}: values differ"
        )
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries vs {len(b)}"
        return next(
            (
                found
                for i, (x, y) in enumerate(zip(a, b))
                if (found := differs(x, y, rule, f"{path}[{i}]"))
            ),
            None,
        )
    if isinstance(a, dict):
        if (sorted(a) if rule.by_name else list(a)) != (sorted(b) if rule.by_name else list(b)):
            return f"{path}: keys {list(a)} vs {list(b)}"
        return next(
            (found for key in a if (found := differs(a[key], b[key], rule, f"{path}[{key!r}]"))),
            None,
        )
    if hasattr(a, "__dict__"):
        return differs(vars(a), vars(b), rule, path)
    return None if a == b or (a != a and b != b) else f"{path}: {a!r} vs {b!r}"


def outcome(function, args: tuple):
    """What a call returns and leaves of its (copied) arguments, or the kind of exception it raises."""
    args = copy.deepcopy(args)
    with np.errstate(all="ignore"):
        try:
            return function(*args), args
        except Exception as error:  # a mutant's exception, compared with the reference's
            return f"raised {type(error).__name__}", args


def run(mutant: Mutant) -> list[str]:
    """Every difference between the mutant's functions and the reference's on the stated inputs; [] when none."""
    rule = EQUIVALENT[mutant.id]
    with tempfile.TemporaryDirectory(prefix="equivalent-") as scratch:
        reference = load(SOLUTIONS_DIR, "reference_run")[mutant.module]
        changed = load(write(mutant, Path(scratch) / "mutant"), f"mutant_{mutant.sha}")[
            mutant.module
        ]
        found = []
        for function in BY_NAME[mutant.module].functions:
            cases = inputs.BY_FUNCTION[function]()
            for round_ in (
                1,
                2,
            ):  # the same inputs again, after all of them: nothing kept from one call to the next
                for n, args in enumerate(cases):
                    if (
                        where := differs(
                            outcome(getattr(reference, function), args),
                            outcome(getattr(changed, function), args),
                            rule,
                        )
                    ) is not None:
                        found.append(f"{function}, input {n}, round {round_}: {where}")
        for name in [name for name in sys.modules if name.startswith(f"mutant_{mutant.sha}")]:
            del sys.modules[name]
    return found
