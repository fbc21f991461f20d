"""`grader try EXERCISE [FUNCTION]`: your function in the foreground on a small example, beside what it should give.

Your code runs in a Python of its own with this terminal attached, so print() shows and
breakpoint() stops there; nothing is confined or timed, as when you run your own script.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

import click
import numpy as np

from grader.check.checks.examples import OUTPUTS, examples, expected
from grader.check.checks.harness import ARG_NAMES
from grader.exercises import BY_NAME
from grader.sandbox.codec import Batches, Foreign, ToyModel, decode, encode
from grader.student.status import resolve
from grader.style import mark, paint

RUN = """\
import sys, traceback, importlib
from pathlib import Path
from grader.sandbox.codec import PACKAGE, decode, encode
from grader.sandbox.imports import install
from grader.sandbox.messages import call_refusal
from grader.sandbox.session import load_package
folder, module, function, given, answer = sys.argv[1:]
load_package(PACKAGE, Path(folder))
install()  # the worker's import rule, so what `grader check` refuses is refused here too
args = decode(Path(given).read_bytes(), live=True)
try:
    value = getattr(importlib.import_module(f"{PACKAGE}.{module}"), function)(*args)
except NotImplementedError:
    sys.exit(4)
except BaseException as error:
    if said := call_refusal(function, error, Path(folder)):
        print(said, file=sys.stderr)
    else:
        traceback.print_exc()
    sys.exit(3)
Path(answer).write_bytes(encode({"value": value, "args": args}))
"""
TOY = {"w": np.array([[0.5], [-0.25]]), "b": np.array([0.1])}
PAIRS = [(np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([[1.0], [0.0]])), (np.array([[2.0, 0.0]]), np.array([[1.0]]))]


def try_function(exercise: str, function: str | None = None, submission: Path | None = None) -> int:
    """Run each function of the exercise (or the one named) on its smallest example; 0 when all match."""
    folder = resolve(submission, "try your function")
    if folder is None:
        return 2
    functions = BY_NAME[exercise].functions
    if function is not None and function not in functions:
        click.echo(f"{exercise} has no function {function}: choose one of {', '.join(functions)}.", err=True)
        return 2
    matches = [try_one(folder, exercise, name) for name in ([function] if function else functions)]
    return 0 if all(matches) else 1


def try_one(folder: Path, exercise: str, function: str) -> bool:
    """Show the example, run the student's function on it, and show what came back beside what should have."""
    args, want, names = example(exercise, function)
    click.echo(paint(f"{function} on a small example:", bold=True))
    for name, value in zip(names, args):
        click.echo(shown(f"  {name} = ", value))
    outcome = run(folder, exercise, function, args)
    if outcome in (None, "not started"):
        said = "is not written yet: it still raises NotImplementedError" if outcome else "did not return (see above)"
        click.echo(f"{mark('not_started' if outcome else 'failed')} {function} {said}.\n")
        return False
    got = outcome["value"] if function != "sgd_step" else outcome["args"][0]
    if function == "train":
        got = (got, outcome["args"][0].params)
    ok = agrees(got, want)
    click.echo(shown("  yours:    ", got))
    click.echo(shown("  expected: ", want))
    click.echo(f"{mark('passed' if ok else 'failed')} {'they agree' if ok else 'they differ'}; `grader check {exercise}` checks far more.\n")
    return ok


def example(exercise: str, function: str):
    """(arguments, expected result, argument names) of the function's smallest example."""
    if function == "sgd_step":
        params, grads, lr = {"w": np.array([1.0, 2.0])}, {"w": np.array([0.5, -0.5])}, 0.1
        return (params, grads, lr), {"w": params["w"] - lr * grads["w"]}, ARG_NAMES["sgd_step"]
    if function == "train":
        from grader.check.checks.public.test_training import by_definition

        losses, weights = by_definition(TOY, PAIRS, 2, 0.1)
        return (ToyModel(dict(TOY)), Batches(PAIRS), 2, 0.1), ([float(v) for v in losses], weights), ARG_NAMES["train"]
    found = examples(f"{exercise}.{function}")[0]
    outputs = expected(found)
    want = outputs[0] if len(OUTPUTS[found.function]) == 1 else tuple(outputs)
    return found.args(), want, ARG_NAMES[function]


def run(folder: Path, exercise: str, function: str, args: tuple) -> dict | str | None:
    """The student's call in a fresh Python attached to this terminal: its value and arguments after, or None."""
    with tempfile.TemporaryDirectory(prefix="grader-try-") as scratch:
        given, answer = Path(scratch) / "args", Path(scratch) / "answer"
        given.write_bytes(encode(args))
        done = subprocess.run([sys.executable, "-X", "utf8", "-c", RUN, str(folder), exercise, function, str(given), str(answer)])
        if done.returncode == 4:
            return "not started"
        if done.returncode != 0 or not answer.exists():
            return None
        return decode(answer.read_bytes())


def agrees(got, want) -> bool:
    """Whether two results agree: arrays within rtol 1e-5, containers item by item."""
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(agrees(got[k], want[k]) for k in want)
    if isinstance(want, (tuple, list)):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and all(agrees(g, w) for g, w in zip(got, want))
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        return type(got) is np.ndarray and got.shape == np.shape(want) and bool(np.allclose(got, want, rtol=1e-5, atol=1e-7))
    return isinstance(got, float) and np.isclose(got, want, rtol=1e-5)


def shown(label: str, value) -> str:
    """A label and a value, numbers to four decimals, continued lines aligned under the first."""
    if isinstance(value, Foreign):
        text = f"a {value.type_name}: {value.text}"
    elif isinstance(value, ToyModel):
        text = f"a toy linear model with params {value.params}"
    elif isinstance(value, Batches):
        text = f"{len(value.pairs)} (x, y) batches"
    else:
        with np.printoptions(precision=4, suppress=True, threshold=40):
            text = repr(value)
    return label + text.replace("\n", "\n" + " " * len(label))
