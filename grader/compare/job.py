"""The comparison's training, inside a worker process: the kit's models driven by the student's code.

grader.compare.command starts this as a worker is started, through the worker's boot: from a private
room holding a copy of the five files and of the code it needs, confined as the machine allows, with
no reference and no bytecode written. The job arrives as the first frame on its private pipe and
its events leave as frames on the other (grader.sandbox.worker.channel), so whatever the student
prints goes to the captured output only.
"""

import importlib
import math
import sys
import time
from pathlib import Path

import numpy as np

from grader.compare import models
from grader.compare.corpus import DECISION_CUE, load_replies
from grader.sandbox.worker.channel import Channel
from grader.sandbox.worker.codec import PACKAGE, encode
from grader.sandbox.worker.imports import install
from grader.sandbox.worker.limits import limit_resources, watch_parent
from grader.sandbox.worker.messages import call_failure
from grader.sandbox.worker.session import BlockSolutions, load_package

BATCH = 16  # replies per step
LR = 0.02  # the lr handed to the student's train
BETAS = (0.9, 0.999)
SAMPLES = 100
MAP_REPLY = 0  # index of the held-out reply whose attention is shown
# random streams: both heads see the same
STREAM = {"mlp": 0, "attention": 1, "attention_no_mask": 1}


class Timed:
    """The student's head or its backward pass, its CPU time counted, and the first call that made float32 arrays float64 noted."""

    def __init__(self, function):
        self.function, self.seconds, self.widened = function, 0.0, None
        self.__name__ = getattr(function, "__name__", "head")

    def __call__(self, *args):
        started = time.process_time()
        value = self.function(*args)
        self.seconds += time.process_time() - started
        if self.widened is None and widens(args, value):
            self.widened = args
        return value


def widens(args, value) -> bool:
    """Whether a call given float32 arrays (and no float64 one) returned a float64 array."""
    given = {a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f"}
    back = [
        v
        for v in (value if isinstance(value, (tuple, list)) else [value])
        if isinstance(v, np.ndarray)
    ]
    return given == {np.dtype(np.float32)} and any(v.dtype == np.float64 for v in back)


def float64_cost(a, w_q, w_k, w_v) -> float:
    """How many times longer the head's products take in float64 than in float32 here, on the head's own inputs (measured)."""

    def products(dtype) -> float:
        x, q_w, k_w, v_w = (np.asarray(m, dtype=dtype) for m in (a, w_q, w_k, w_v))
        started = time.process_time()
        for _ in range(3):
            q, k, v = x @ q_w, x @ k_w, x @ v_w
            (q @ np.swapaxes(k, -1, -2)) @ v
        return time.process_time() - started

    products(np.float32)  # warm
    return products(np.float64) / max(products(np.float32), 1e-9)


def widening_notice(head: Timed, backward: Timed, seconds: float) -> str | None:
    """The note for the student when their head turned the comparison's float32 arrays into float64, with what it cost."""
    widened = [f.__name__ for f in (head, backward) if f.widened is not None]
    if not widened:
        return None
    ratio = float64_cost(*(head.widened or backward.widened)[-4:])
    return (
        f"Your {' and your '.join(widened)} turned the comparison's float32 arrays into float64: the head's forward and backward "
        f"passes took {head.seconds + backward.seconds:.1f} s of CPU time of the {seconds:.1f} s the attention model trained, "
        f"and its products take {ratio:.1f}× as long in float64 as in float32 here. A NumPy float64 scalar does it, "
        "such as np.sqrt(d) in q @ k.T / np.sqrt(d): math.sqrt(d), or a Python float, keeps float32 arrays float32."
    )


class Stop(Exception):
    """The job cannot go on: kind ("diverged", "steps") and a message for the student."""


class Coach:
    """A model as the student's train sees it: .params, and .loss_and_grads giving Adam's step direction.

    The student's sgd_step subtracts lr times what it is given; handing it Adam's direction times a
    cosine schedule makes that plain step an Adam step, so the student's train and sgd_step still
    drive every update, in far fewer steps than the raw gradient needs.
    """

    def __init__(self, model, steps: int, on_step):
        self.model, self.params, self.steps, self.on_step = model, model.params, steps, on_step
        self.moments = {
            name: (np.zeros_like(p), np.zeros_like(p)) for name, p in model.params.items()
        }
        self.losses: list[float] = []

    def loss_and_grads(self, x, y):
        """The model's loss, and for every parameter its Adam direction, scaled by the schedule."""
        loss, grads = self.model.loss_and_grads(x, y)
        if not math.isfinite(loss):
            raise Stop("diverged", f"the loss became {loss} at step {len(self.losses) + 1}")
        self.losses.append(float(loss))
        t = len(self.losses)
        schedule = 0.5 * (1 + math.cos(math.pi * (t - 1) / self.steps))
        (b1, b2), direction = BETAS, {}
        for name, g in grads.items():
            m, v = self.moments[name]
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * np.square(g)
            step = np.sqrt(v * (1 / (1 - b2**t)))
            step += 1e-8
            np.divide(m, step, out=step)
            step *= schedule / (1 - b1**t)  # schedule * m_hat / (sqrt(v_hat) + eps)
            direction[name] = step.astype(models.DTYPE, copy=False)
        self.on_step(t, loss)
        return loss, direction


def decision_probabilities(model, replies: list[str]) -> list[float]:
    """For each reply, the model's probability of its actual first decision character after the cue."""
    probs = []
    for start in range(0, len(replies), 100):
        chunk = replies[start : start + 100]
        x, y = models.batch(chunk)
        logits, _ = model.forward(x)
        p = models.probabilities(model.softmax, logits.astype(np.float64))  # (B, T, V)
        for row, text in enumerate(chunk):
            # the target at position `at` is that character
            at = text.index(DECISION_CUE) + len(DECISION_CUE)
            probs.append(float(p[row, at, y[row, at]]))
    return probs


def attention_map(model, text: str) -> dict:
    """The head's shares at the position that predicts the decision: which earlier characters it reads."""
    cue = text.index(DECISION_CUE) + len(DECISION_CUE)
    x, _ = models.batch([text])
    _, _, shares = model.attend(x[:, : cue + 1])
    row = np.asarray(shares, dtype=np.float64)[0, cue]  # (cue + 1,) over start token + text[:cue]
    return {"text": text[:cue], "start_share": float(row[0]), "shares": [float(s) for s in row[1:]]}


class Job:
    """One comparison: train, evaluate and report each model in turn."""

    def __init__(self, spec: dict, emit):
        self.spec, self.emit = spec, emit
        self.seed = spec["seed"]
        self.current: str | None = None
        self.train_replies, self.valid_replies = load_replies("train"), load_replies("valid")

    def rng(self, *purpose: int) -> np.random.Generator:
        """A generator of its own for each purpose, so one change does not shift the rest."""
        return np.random.default_rng([self.seed, *purpose])

    def fit(self, name: str, model, steps: int, train) -> Coach:
        """Train with the student's train, reporting progress."""
        self.current, last = name, [0.0]

        def on_step(t, loss):
            now = time.monotonic()
            if t == steps or now - last[0] > 0.1:
                last[0] = now
                self.emit(
                    {
                        "event": "progress",
                        "model": name,
                        "step": t,
                        "steps": steps,
                        "loss": float(loss),
                    }
                )

        coach = Coach(model, steps, on_step)
        train(
            coach, models.batches(self.train_replies, BATCH, self.rng(1, STREAM[name])), steps, LR
        )
        if len(coach.losses) != steps:
            raise Stop("steps", f"your train made {len(coach.losses)} steps when asked for {steps}")
        return coach

    def evaluate(self, name: str, model, coach: Coach, seconds: float, attention: bool):
        """The figures of one model, sent as an event."""
        self.emit({"event": "status", "model": name, "text": "sampling replies"})
        replies = models.sample(model, self.rng(2, STREAM[name]), self.spec.get("samples", SAMPLES))
        result = {
            "event": "model",
            "model": name,
            "decision_probs": decision_probabilities(model, self.valid_replies),
            "replies": replies,
            "losses": coach.losses,
            "train_seconds": float(seconds),
        }
        if attention:
            result["attention_map"] = attention_map(model, self.valid_replies[MAP_REPLY])
        self.emit(result)

    def run(self, fns: dict):
        """The MLP, then the MLP with the student's head started from it (and, if asked, without the mask)."""
        steps = self.spec["steps"]
        mlp = models.CharMLP(self.rng(0, 0), fns["softmax"])
        start = time.perf_counter()
        coach = self.fit("mlp", mlp, steps["mlp"], fns["train"])
        self.evaluate("mlp", mlp, coach, time.perf_counter() - start, attention=False)
        heads = [("attention", fns["attention_head"], fns["attention_head_backward"])]
        if self.spec.get("no_mask"):
            unmasked = [
                without_mask(fns[name], fns["apply_causal_mask"])
                for name in ("attention_head", "attention_head_backward")
            ]
            problem = still_masked(*unmasked)
            if problem:
                self.emit(
                    {"event": "notice", "text": f"No model without the mask this time: {problem}"}
                )
            else:
                heads.append(("attention_no_mask", *unmasked))
        for name, head, head_backward in heads:
            head, head_backward = Timed(head), Timed(head_backward)
            model = models.AttentionMLP(self.rng(0, 1), head, head_backward, fns["softmax"])
            model.params.update({k: v.copy() for k, v in mlp.params.items()})
            start, cpu = time.perf_counter(), time.process_time()
            coach = self.fit(name, model, steps["attention"], fns["train"])
            if name == "attention" and (
                notice := widening_notice(head, head_backward, time.process_time() - cpu)
            ):
                self.emit({"event": "notice", "text": notice})
            self.evaluate(name, model, coach, time.perf_counter() - start, attention=True)


def without_mask(function, mask, package: str = PACKAGE):
    """function with the student's apply_causal_mask replaced by the identity during each call.

    The identity takes its place wherever a module of the student's package binds it (as
    `from .masking import apply_causal_mask` does, under any name), so the student's own head and
    backward pass run without the mask; still_masked tells when that is not how they mask.
    """

    def identity(scores):
        return scores

    def call(*args):
        bound = [
            (vars(m), key)
            for name, m in list(sys.modules.items())
            if name.startswith(package + ".")
            for key, value in list(vars(m).items())
            if value is mask
        ]
        for namespace, key in bound:
            namespace[key] = identity
        try:
            return function(*args)
        finally:
            for namespace, key in bound:
                namespace[key] = mask

    call.__name__ = getattr(function, "__name__", "head")
    return call


def still_masked(head, head_backward) -> str | None:
    """Why the head or its backward pass still masks with apply_causal_mask replaced, or None when neither does."""
    rng = np.random.default_rng(0)
    x, w_q, w_k, w_v = (
        rng.standard_normal((1, 4, 3)),
        rng.standard_normal((3, 2)),
        rng.standard_normal((3, 2)),
        rng.standard_normal((3, 2)),
    )
    shares = np.asarray(head(x, w_q, w_k, w_v)[1])
    if np.allclose(np.triu(shares[0], 1), 0):
        return (
            "your attention_head masks without calling your apply_causal_mask (--no-mask replaces that function "
            "by the identity), so there is no head without the mask to train. Call apply_causal_mask, as the stub's hint says."
        )
    d_out = np.zeros((1, 4, 2))
    d_out[:, 0] = 1.0  # the output at position 0: with the mask it depends on x[0] alone
    d_x = np.asarray(head_backward(d_out, x, w_q, w_k, w_v)[0])
    if np.allclose(d_x[:, 1:], 0):
        return (
            "your attention_head_backward masks without calling your apply_causal_mask (--no-mask replaces that function "
            "by the identity), so its gradients would not be those of the head without the mask."
        )
    return None


def student_functions(folder: Path) -> dict:
    """The student's functions the comparison calls (their train calls their sgd_step), from their folder."""
    sys.meta_path.insert(0, BlockSolutions())
    load_package(PACKAGE, folder)
    install()  # the checks' import rule: numpy, the standard library and the sibling modules only
    modules = {
        name: importlib.import_module(f"{PACKAGE}.{name}")
        for name in ("masking", "softmax", "heads", "training")
    }
    return {
        "apply_causal_mask": modules["masking"].apply_causal_mask,
        "softmax": modules["softmax"].softmax,
        "attention_head": modules["heads"].attention_head,
        "attention_head_backward": modules["training"].attention_head_backward,
        "train": modules["training"].train,
    }


def main(landlocked: bool = False):
    """Run the job the grader sends, sending events back as frames; what the student prints goes to stderr."""
    channel = Channel()
    for stream in (
        sys.stdout,
        sys.stderr,
    ):  # flushed at each line, as `python -u` would: kept through an os._exit
        stream.reconfigure(line_buffering=True, write_through=True)  # type: ignore[union-attr]
    settings = channel.read()
    if settings is None:  # the grader has gone
        return
    limit_resources({})
    if (
        settings["parent"] is not None
    ):  # None inside namespaces, where the grader cannot be seen: ending bubblewrap ends the job
        watch_parent(settings["parent"])

    def emit(event):
        channel.write(encode(event))

    emit({"event": "started", "landlocked": landlocked})
    folder = Path(settings["submission"])
    job = Job(settings, emit)
    try:
        job.run(student_functions(folder))
    except Stop as stop:
        emit(
            {"event": "error", "kind": stop.args[0], "model": job.current, "message": stop.args[1]}
        )
    except BaseException as error:  # the student's code may raise anything; the parent explains it
        emit(
            {
                "event": "error",
                "kind": "raised",
                "model": job.current,
                "message": call_failure("your code", error, folder),
            }
        )
    else:
        emit({"event": "done"})
