"""grader compare: the gate, the JSON, failures in the worker, Ctrl-C, and one full run of the figures."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.check.results import ExerciseResult, Report
from grader.cli import main
from grader.compare import command as comparison
from grader.compare import plot
from grader.compare import view as compare_view
from grader.course.stubs import write_stubs
from grader.paths import SOLUTIONS_DIR

QUICK = {"steps": {"mlp": 3, "attention": 2}, "samples": 5}
KEYS = {"p_decision", "correct_replies", "sampled_replies"}


@pytest.fixture
def reference_copy(tmp_path):
    """A writable copy of the reference solutions, as a student's folder."""
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture
def ungated(monkeypatch):
    """Treat every submission as passing the checks."""
    monkeypatch.setattr(comparison, "unfinished", lambda folder: [])


def edit(folder, module, old, new):
    """Change one piece of a module of the submission."""
    path = folder / f"{module}.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def no_training(*args, **kwargs):
    raise AssertionError("compare trained although it should have stopped first")


def test_gate_names_the_exercises_left_and_exits_1(monkeypatch, reference_copy):
    statuses = {
        "scores": "passed",
        "masking": "passed",
        "softmax": "passed",
        "heads": "failed",
        "training": "not_started",
    }
    report = Report([ExerciseResult(n, s, 0.0, 10.0) for n, s in statuses.items()], seed=0)
    monkeypatch.setattr("grader.check.runner.run_checks", lambda folder: report)
    monkeypatch.setattr(comparison, "run_job", no_training)
    result = CliRunner().invoke(main, ["compare", "--submission", str(reference_copy)])
    assert result.exit_code == 1
    assert "heads: fails" in result.output and "training: not started" in result.output
    assert "softmax" not in result.output
    assert "check heads" in result.output


@pytest.mark.slow
def test_gate_uses_the_verdict_of_the_real_checks(monkeypatch, tmp_path, capsys):
    folder = write_stubs(tmp_path / "stubs")
    monkeypatch.setattr(comparison, "run_job", no_training)
    assert comparison.compare(submission=folder) == 1
    assert "Checking your five exercises before training" in capsys.readouterr().out


@pytest.mark.slow
def test_a_verdict_file_edited_to_passed_unlocks_nothing(monkeypatch, tmp_path, capsys):
    folder = write_stubs(tmp_path / "exercises")
    # the student's own exercises/: grader check keeps its verdict there
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(comparison, "run_job", no_training)
    assert CliRunner().invoke(main, ["check", "softmax"]).exit_code == 1
    saved = list((folder / ".grader").glob("*.json"))
    assert saved, "grader check kept no verdict beside the student's own exercises/"
    for path in saved:
        path.write_text(
            path.read_text().replace('"not_started"', '"passed"').replace('"failed"', '"passed"')
        )
    assert comparison.compare(submission=folder) == 1
    assert "softmax: not started" in capsys.readouterr().out


@pytest.mark.slow
def test_compare_leaves_nothing_in_the_folder_it_reads(reference_copy, capsys):
    before = sorted(p.relative_to(reference_copy) for p in reference_copy.rglob("*"))
    assert comparison.compare(submission=reference_copy, **QUICK) == 0
    assert sorted(p.relative_to(reference_copy) for p in reference_copy.rglob("*")) == before


def test_missing_folder_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["compare", "--submission", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_plot_without_matplotlib_says_so_before_training_and_how_to_get_it(
    monkeypatch, tmp_path, capsys
):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    assert not plot.can_plot()
    picture = tmp_path / "f.png"
    assert comparison.compare(solutions=True, plot_file=picture, **QUICK) == 2
    said = capsys.readouterr()
    assert "Training the models" not in said.out + said.err and not picture.exists()
    assert (
        "No plot was drawn: --plot needs matplotlib" in said.err
        and "pip install -e '.[plot]'" in said.err
    )
    assert "Nothing was trained; leave out --plot" in said.err


@pytest.mark.slow
def test_the_plots_tick_labels_do_not_overlap(tmp_path):
    pyplot = pytest.importorskip("matplotlib.pyplot")
    figures = {
        n: {"p_decision": p, "correct_replies": c, "sampled_replies": 100}
        for n, p, c in (("mlp", 0.5, 30), ("attention", 1.0, 95))
    }
    # the bars' share of the figure draw() makes
    fig, axes = pyplot.subplots(figsize=(16 * 2 / 9, 4.5))
    plot.kit_and_lesson(axes, figures)
    fig.canvas.draw()
    boxes = [label.get_window_extent() for label in axes.get_xticklabels()]
    boxes += [text.get_window_extent() for text in axes.texts]
    assert len(boxes) == 6
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    pyplot.close(fig)


@pytest.mark.slow
def test_quick_run_writes_the_json_of_spec_and_is_deterministic(tmp_path, capsys):
    first, again = tmp_path / "a.json", tmp_path / "b.json"
    assert comparison.compare(solutions=True, seed=3, json_file=first, **QUICK) == 0
    assert comparison.compare(solutions=True, seed=3, json_file=again, **QUICK) == 0
    data = json.loads(first.read_text())
    assert set(data) >= {"seed", "seconds", "models"} and data["seed"] == 3
    assert set(data["models"]) == {"mlp", "attention"}
    for figures in data["models"].values():
        assert set(figures) >= KEYS
        assert 0 <= figures["p_decision"] <= 1 and figures["sampled_replies"] == 5
        assert 0 <= figures["correct_replies"] <= 5
    other = json.loads(again.read_text())
    assert other["models"] == data["models"] | {
        n: {**f, "train_seconds": other["models"][n]["train_seconds"]}
        for n, f in data["models"].items()
    }
    out = capsys.readouterr().out
    assert "8-character MLP" in out and "0.86" in out and "Adam" in out


@pytest.mark.slow
def test_no_mask_trains_the_students_own_head_without_the_mask_too(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert comparison.compare(solutions=True, no_mask=True, json_file=path, **QUICK) == 0
    data = json.loads(path.read_text())
    assert (
        set(data["models"]) == {"mlp", "attention", "attention_no_mask"} and data["mask"] is False
    )
    out = capsys.readouterr().out
    assert (
        "Without the causal mask (the reference head with its apply_causal_mask replaced by the identity)"
        in out
    )


@pytest.mark.slow
def test_no_mask_says_so_when_the_head_masks_without_apply_causal_mask(
    ungated, reference_copy, tmp_path, capsys
):
    edit(
        reference_copy,
        "heads",
        "    shares = softmax(apply_causal_mask(attention_scores(q, k)))",
        "    scores = attention_scores(q, k)\n"
        "    shares = softmax(np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf))",
    )
    path = tmp_path / "r.json"
    assert comparison.compare(submission=reference_copy, no_mask=True, json_file=path, **QUICK) == 0
    assert set(json.loads(path.read_text())["models"]) == {"mlp", "attention"}
    out = capsys.readouterr().out
    assert "your attention_head masks without calling your apply_causal_mask" in out
    assert (
        "MLP + your head" in out
        and "Where your head looks" in out
        and "Training: your train and sgd_step" in out
    )
    assert "reference" not in out


@pytest.mark.slow
def test_the_reference_models_are_not_called_yours(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert comparison.compare(solutions=True, json_file=path, **QUICK) == 0
    captured = capsys.readouterr()
    assert "MLP + reference head" in captured.out and "The reference head reads" in captured.out
    assert "Training: the reference train and sgd_step" in captured.out
    assert not any(
        words in captured.out + captured.err
        for words in ("your head", "Your head", "your train", "your own")
    )
    assert json.loads(path.read_text())["functions"] == "reference"


def test_without_a_terminal_the_training_says_what_it_does_and_how_long_it_takes():
    assert comparison.training_words(comparison.STEPS) == (
        "Training the models: 1000 steps of the MLP, then 400 with attention; this takes about 7 s on an idle machine, 20 s or more on a busy one..."
    )
    assert "takes" not in comparison.training_words(QUICK["steps"])


def test_an_exception_in_the_students_train_is_reported(ungated, reference_copy, capsys):
    edit(
        reference_copy,
        "training",
        "        x, y = next(batches)\n",
        "        x, y = next(batches)\n        if len(losses) == 2:\n            raise ValueError('boom')\n",
    )
    assert comparison.compare(submission=reference_copy, **QUICK) == 1
    err = capsys.readouterr().err
    assert "ValueError: boom" in err and "training.py" in err and "8-character MLP" not in err


ON_THE_PIPE = "    import gc, os, sys\n    channel = next(o for o in gc.get_objects() if type(o).__name__ == 'Channel')\n    WRITE\n"
ENCODE = "sys.modules['grader.sandbox.worker.codec'].encode"  # the job's own codec, loaded for its channel
WRITTEN = {  # what the student's train writes on the job's own pipe, and what compare then says
    "two bytes": ("channel.write(b'ab')", "could not take what its job sent"),
    "a frame of 1 TiB": (
        "os.write(channel.replies, (1 << 40).to_bytes(8, 'little'))",
        "a frame of 1099511627776 bytes",
    ),
    "a forged end": (
        f"channel.write({ENCODE}({{'event': 'done'}}))",
        "finished without its mlp figures",
    ),
    "a model event without figures": (
        f"channel.write({ENCODE}({{'event': 'model', 'model': 'mlp'}}))",
        "a model event without",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", WRITTEN)
def test_what_the_students_code_writes_on_the_jobs_pipe_is_its_failure_in_words(
    ungated, reference_copy, capsys, case
):
    """The job's events cross on a pipe of their own, checked before any is used: no traceback, no forged figures."""
    written, said = WRITTEN[case]
    edit(
        reference_copy,
        "training",
        "    losses = []\n",
        "    losses = []\n" + ON_THE_PIPE.replace("WRITE", written),
    )
    assert comparison.compare(submission=reference_copy, **QUICK) == 1
    captured = capsys.readouterr()
    assert said in captured.err and "wrote to a file descriptor it did not open" in captured.err
    assert "Traceback" not in captured.err + captured.out and "8-character MLP" not in captured.out


def test_event_lines_the_students_code_prints_are_only_its_output(ungated, reference_copy, capsys):
    printed = (
        '    print(\'{"event": "done"}\')\n    print(\'{"event": "model", "model": "mlp"}\')\n'
    )
    edit(reference_copy, "training", "    losses = []\n", "    losses = []\n" + printed)
    assert comparison.compare(submission=reference_copy, **QUICK) == 0
    out = capsys.readouterr().out
    assert 'Your code printed (the end):\n{"event": "done"}' in out and "8-character MLP" in out


@pytest.mark.slow
def test_a_nan_loss_says_the_training_diverged(ungated, reference_copy, capsys):
    edit(
        reference_copy,
        "heads",
        "    return shares @ v, shares",
        "    if x.dtype == np.float32:\n        v = v * np.nan\n    return shares @ v, shares",
    )
    assert comparison.compare(submission=reference_copy, **QUICK) == 1
    err = capsys.readouterr().err
    assert "diverged while training the attention model" in err and "nan" in err


def test_what_the_students_code_prints_is_shown_when_it_fails(ungated, reference_copy, capsys):
    edit(
        reference_copy,
        "training",
        "    losses = []\n",
        "    losses = []\n    print('hello from train')\n    import os\n    os._exit(3)\n",
    )
    assert comparison.compare(submission=reference_copy, **QUICK) == 1
    err = capsys.readouterr().err
    assert "exited with status 3" in err and "hello from train" in err


@pytest.mark.slow
def test_what_the_students_code_prints_is_shown_after_a_run_too(ungated, reference_copy, capsys):
    edit(
        reference_copy,
        "training",
        "    losses = []\n",
        "    losses = []\n    print('training for', steps, 'steps')\n",
    )
    assert comparison.compare(submission=reference_copy, **QUICK) == 0
    out = capsys.readouterr().out
    assert (
        "Your code printed (the end):\ntraining for 3 steps\ntraining for 2 steps" in out
        and "8-character MLP" in out
    )


def test_the_import_rule_holds_in_the_comparison_too(ungated, reference_copy, capsys):
    edit(
        reference_copy,
        "training",
        "    losses = []\n",
        "    losses = []\n    import psutil  # installed, and still refused\n",
    )
    assert comparison.compare(submission=reference_copy, **QUICK) == 1
    assert "training.py imports psutil, which the grader does not allow" in capsys.readouterr().err


@pytest.mark.posix("probes the worker with os.kill(pid, 0), which on Windows sends Ctrl-C instead")
def test_ctrl_c_kills_the_worker_and_exits_130(monkeypatch, capsys):
    started = []
    original = comparison.TrainingJob.__init__

    def remember(self, folder, spec):
        original(self, folder, spec)
        started.append(self.process.pid)

    def interrupt(self, event):
        raise KeyboardInterrupt

    monkeypatch.setattr(comparison.TrainingJob, "__init__", remember)
    monkeypatch.setattr(compare_view.Progress, "update", interrupt)
    assert comparison.compare(solutions=True, **QUICK) == 130
    assert "Stopped" in capsys.readouterr().err
    with pytest.raises(ProcessLookupError):
        os.kill(started[0], 0)


@pytest.mark.slow
def test_full_run_on_the_reference_meets_the_targets(tmp_path):
    path = tmp_path / "figures.json"
    assert comparison.compare(solutions=True, seed=0, json_file=path) == 0
    figures = json.loads(path.read_text())["models"]
    mlp, attention = figures["mlp"], figures["attention"]
    assert 0.45 <= mlp["p_decision"] <= 0.55 and 25 <= mlp["correct_replies"] <= 55
    assert attention["p_decision"] >= 0.95 and attention["correct_replies"] >= 90


@pytest.mark.slow
@pytest.mark.linux("bubblewrap's namespaces keep the kit's folder out of the job's view")
def test_the_training_job_cannot_read_the_reference(ungated, reference_copy, capsys):
    from grader.sandbox import isolation

    if isolation.choose().name != "namespaces":
        pytest.skip("no namespaces tier on this machine")
    target = SOLUTIONS_DIR / "softmax.py"
    probe = f"    try:\n        open({str(target)!r}).read()\n        print('read the reference')\n    except OSError:\n        print('the reference is out of reach')\n"
    edit(reference_copy, "training", "    losses = []\n", "    losses = []\n" + probe)
    assert comparison.compare(submission=reference_copy, **QUICK) == 0
    out = capsys.readouterr().out
    assert "the reference is out of reach" in out and "read the reference" not in out


@pytest.mark.slow
def test_the_training_job_keeps_its_heap_padded(ungated, reference_copy, capsys):
    """glibc handing the heap's top back after every step and faulting it in again took a third of the training."""
    probe = "    print('heap pad:', __import__('os').environ.get('MALLOC_TOP_PAD_'))\n"
    edit(reference_copy, "training", "    losses = []\n", "    losses = []\n" + probe)
    assert comparison.compare(submission=reference_copy, **QUICK) == 0
    assert f"heap pad: {64 << 20}" in capsys.readouterr().out


def test_the_training_job_starts_through_the_workers_one_boot(reference_copy):
    """No boot of its own: the worker's boot, told to run the job, from a room holding the worker's package and the job's modules."""
    job = comparison.TrainingJob(reference_copy, {"seed": 0, **QUICK, "no_mask": False})
    try:
        boot = next(arg for arg in job.launch.argv if arg.endswith(".py"))
        config = json.loads(job.launch.argv[job.launch.argv.index(boot) + 2])
        assert (
            boot.endswith("/grader/sandbox/worker/boot.py")
            and config["main"] == "grader.compare.job"
        )
        assert sorted(
            p.name for p in (job.launch.room.kit / "grader" / "compare").iterdir()
        ) == sorted(f"{name}.py" for name in comparison.JOB_MODULES)
    finally:
        job.stop()
    assert not (Path(comparison.__file__).parent / "job_boot.py").exists()
