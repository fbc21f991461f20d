"""Time the comparison's training and evaluation in numpy and, when PyTorch is installed, in PyTorch.

The same configuration both ways: the 8-character MLP, then the MLP with one causal head started
from it, batches of 16 replies, Adam with a cosine schedule, then p_decision on the held-out replies
and 100 sampled replies. numpy runs the kit's models with the reference solutions, as
`grader compare --solutions` does, but in this process; PyTorch runs an equivalent model on the CPU
with autograd. Both use one thread and run in this process, PyTorch imported before any timing.
Prints each run's times and figures and numpy's time over PyTorch's; with --repeat N each runs N
times, alternating which goes first, and the ratio is of the medians. The process runs with the heap
padding the training job gets (grader.compare.command.HEAP_PAD). With --command N it first times
`grader compare --solutions` itself N times, end to end, against the 15 s target, with
the load average and the hypervisor's share of the CPU (steal) meanwhile.

    python bench/bench_compare.py [--seed N] [--mlp-steps N] [--attention-steps N] [--repeat N] [--command N]
"""

import argparse
import math
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import machine  # noqa: E402
import numpy as np  # noqa: E402

from grader.compare import job as training_job  # noqa: E402
from grader.compare import models
from grader.compare.command import HEAP_PAD, STEPS  # noqa: E402
from grader.compare.corpus import check_reply, load_replies  # noqa: E402
from solutions.heads import attention_head  # noqa: E402
from solutions.softmax import softmax  # noqa: E402
from solutions.training import attention_head_backward, train  # noqa: E402


def run_numpy(seed: int, steps: dict) -> dict:
    """The kit's own pipeline, in this process; its figures."""
    figures = {}

    def emit(event):
        if event["event"] == "model":
            figures[event["model"]] = (
                float(np.mean(event["decision_probs"])),
                sum(check_reply(r).correct for r in event["replies"]),
            )

    job = training_job.Job({"seed": seed, "steps": steps}, emit)
    job.run(
        {
            "attention_head": attention_head,
            "attention_head_backward": attention_head_backward,
            "train": train,
            "softmax": softmax,
        }
    )
    return figures


def run_torch(seed: int, steps: dict) -> dict:
    """The same models, optimiser, batches and evaluation in PyTorch on the CPU; its figures."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    f = torch.float32
    train_replies, valid_replies = load_replies("train"), load_replies("valid")

    def mlp_params(rng):
        return {
            k: torch.tensor(v, dtype=f, requires_grad=True)
            for k, v in models.CharMLP(rng, None).params.items()
        }

    def forward(p, x, attend):
        ctx = torch.as_tensor(models.contexts(x))  # (B, T, 8)
        u = p["emb"][ctx].reshape(*x.shape, -1)  # (B, T, 128)
        if attend:
            xt = torch.as_tensor(x)
            a = p["tok"][xt] + p["pos"][: x.shape[1]]  # (B, T, 32)
            q, k, v = a @ p["w_q"], a @ p["w_k"], a @ p["w_v"]
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (B, T, T)
            mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
            u = u + torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v
        h = torch.tanh(u @ p["w1"] + p["b1"])
        return h @ p["w2"] + p["b2"]  # (B, T, V)

    def fit(p, n, attend, rng):
        opt = torch.optim.Adam(p.values(), lr=training_job.LR, betas=training_job.BETAS, eps=1e-8)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda t: 0.5 * (1 + math.cos(math.pi * t / n))
        )
        data = models.batches(train_replies, training_job.BATCH, rng)
        for _ in range(n):
            x, y = next(data)
            logits = forward(p, x, attend)
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]),
                torch.as_tensor(y).reshape(-1),
                ignore_index=models.IGNORE,
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()

    def evaluate(p, attend, rng):
        with torch.no_grad():
            x, y = models.batch(valid_replies)
            probs = torch.softmax(forward(p, x, attend), dim=-1).numpy()
            at = [r.index(", so ") + 5 for r in valid_replies]
            p_decision = float(np.mean([probs[i, t, y[i, t]] for i, t in enumerate(at)]))
            tokens = np.zeros((training_job.SAMPLES, 1), dtype=np.int64)
            writing = np.ones(len(tokens), dtype=bool)
            while writing.any() and tokens.shape[1] < models.MAX_LEN:
                last = torch.softmax(
                    forward(p, tokens[writing], attend)[:, -1].double(), dim=-1
                ).numpy()
                step = np.zeros(len(tokens), dtype=np.int64)
                step[writing] = np.minimum(
                    (last.cumsum(-1) < rng.random((len(last), 1))).sum(-1), models.VOCAB - 1
                )
                tokens = np.concatenate([tokens, step[:, None]], axis=1)
                writing &= step != models.BOUNDARY
            correct = sum(check_reply(models.decode(row[1:])).correct for row in tokens)
        return p_decision, correct

    rng = np.random.default_rng(seed)
    mlp = mlp_params(rng)
    fit(mlp, steps["mlp"], False, rng)
    figures = {"mlp": evaluate(mlp, False, rng)}
    extra = models.AttentionMLP(rng, None, None, None).params
    att = {k: torch.tensor(v, dtype=f, requires_grad=True) for k, v in extra.items()}
    att.update({k: v.detach().clone().requires_grad_(True) for k, v in mlp.items()})
    fit(att, steps["attention"], True, rng)
    figures["attention"] = evaluate(att, True, rng)
    return figures


def timed(run, seed, steps):
    """Wall and CPU seconds of one run, and its figures."""
    wall, cpu = time.perf_counter(), time.process_time()
    figures = run(seed, steps)
    return time.perf_counter() - wall, time.process_time() - cpu, figures


def line(name: str, wall: float, cpu: float, figures) -> str:
    """One timing as printed."""
    return f"{name + ':':8} {wall:6.1f} s wall  {cpu:6.1f} s CPU  {figures}"


def command_runs(n: int, target: float = 15.0) -> None:
    """Time `grader compare --solutions` end to end, n times, and print the median against the target."""
    print(f"load average before: {machine.load()} on {os.cpu_count()} cores")
    ticks, walls = machine.cpu_times(), []
    for _ in range(n):
        start = time.perf_counter()
        run = subprocess.run(
            [sys.executable, "-m", "grader", "compare", "--solutions"],
            capture_output=True,
            text=True,
        )
        walls.append(time.perf_counter() - start)
        if run.returncode != 0:
            raise SystemExit(
                f"grader compare --solutions failed:\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
            )
    median = statistics.median(walls)
    verdict = "within" if median <= target else "OVER"
    print(
        f"grader compare --solutions: median {median:.1f} s ({', '.join(f'{w:.1f}' for w in walls)}): {verdict} the {target:g} s target"
    )
    print(f"load average after: {machine.load()}; {machine.stolen(ticks, machine.cpu_times())}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mlp-steps", type=int, default=STEPS["mlp"])
    parser.add_argument("--attention-steps", type=int, default=STEPS["attention"])
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each, alternating which goes first; medians"
    )
    parser.add_argument(
        "--command",
        type=int,
        default=0,
        help="first time `grader compare --solutions` this many times",
    )
    args = parser.parse_args()
    if args.command:
        command_runs(args.command)
    steps = {"mlp": args.mlp_steps, "attention": args.attention_steps}
    print(f"steps {steps}, seed {args.seed}, one thread")
    runs = {"numpy": run_numpy}
    try:
        import torch

        torch.set_num_threads(1)  # imported and set before any timing
        runs["PyTorch"] = run_torch
    except ImportError:
        print("PyTorch is not installed: numpy time only (pip install torch to compare).")
    times = {name: [] for name in runs}
    for i in range(args.repeat):
        for name in list(runs)[:: 1 if i % 2 == 0 else -1]:
            wall, cpu, figures = timed(runs[name], args.seed, steps)
            times[name].append((wall, cpu))
            print(line(name, wall, cpu, figures))
    medians = {name: np.median(np.array(t), axis=0) for name, t in times.items()}
    if args.repeat > 1:
        for name, (wall, cpu) in medians.items():
            print(f"{name + ':':8} {wall:6.1f} s wall  {cpu:6.1f} s CPU  median of {args.repeat}")
    if "PyTorch" in medians:
        (wall, cpu), (t_wall, t_cpu) = medians["numpy"], medians["PyTorch"]
        print(f"numpy / PyTorch: {wall / t_wall:.2f} wall, {cpu / t_cpu:.2f} CPU")


if __name__ == "__main__":
    if any(
        os.environ.get(name) != value for name, value in HEAP_PAD.items()
    ):  # glibc reads it at the start
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **HEAP_PAD})
    main()
