"""grader compare notes a head that turns the comparison's float32 arrays into float64, with what it cost; a float32 head gets no note."""

import shutil

import numpy as np
import pytest

from grader.compare import command as comparison
from grader.compare import job
from grader.paths import SOLUTIONS_DIR

QUICK = {"steps": {"mlp": 3, "attention": 2}, "samples": 5}
NOTE = "turned the comparison's float32 arrays into float64"


@pytest.fixture
def reference_copy(tmp_path, monkeypatch):
    """A writable copy of the reference, taken as passing the checks."""
    monkeypatch.setattr(comparison, "unfinished", lambda folder: [])
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.mark.slow
def test_np_sqrt_makes_the_head_float64_and_compare_says_what_it_cost(reference_copy, capsys):
    scores = reference_copy / "scores.py"
    scores.write_text(scores.read_text().replace("/ math.sqrt(d)", "/ np.sqrt(d)"))
    assert comparison.compare(submission=reference_copy, **QUICK) == 0
    out = capsys.readouterr().out
    assert f"Your attention_head and your attention_head_backward {NOTE}" in out, out
    assert (
        "s of CPU time of the" in out
        and "as long in float64 as in float32 here" in out
        and "math.sqrt(d)" in out
    )


@pytest.mark.slow
def test_the_float32_reference_gets_no_note(reference_copy, capsys):
    assert comparison.compare(submission=reference_copy, **QUICK) == 0
    assert NOTE not in capsys.readouterr().out


def test_widens_only_float32_in_and_float64_out():
    f32, f64 = np.ones((2, 2), np.float32), np.ones((2, 2))
    assert job.widens((f32, f32), (f64, [f32]))
    assert not job.widens((f32, f32), (f32, f32))
    assert not job.widens((f64, f64), f64)  # float64 given: nothing widened
    assert not job.widens((f32, f64), f64)


def test_a_timed_function_counts_its_time_and_keeps_the_first_widening_call():
    def head(a, w_q, w_k, w_v):
        return (a @ w_q) / np.sqrt(w_q.shape[1]), None

    timed = job.Timed(head)
    args = tuple(
        np.ones((1, 3, 4), np.float32) if n == 0 else np.ones((4, 4), np.float32) for n in range(4)
    )
    timed(*args)
    assert (
        all(kept is given for kept, given in zip(timed.widened, args))
        and timed.seconds >= 0.0
        and timed.__name__ == "head"
    )
    notice = job.widening_notice(timed, job.Timed(head), 1.0)
    assert notice is not None and notice.startswith(f"Your head {NOTE}")
