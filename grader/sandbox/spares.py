"""The isolation probe's worker, kept: it is the run's first worker, so a run starts none after its probe."""

import atexit
import threading

from grader.sandbox.errors import StudentError
from grader.sandbox.process import WorkerProcess

_kept: list[WorkerProcess] = []  # the last probe's worker, not yet taken
_taking = threading.Lock()
_here = threading.local()  # the worker the probe made in this thread


def probe(confinement) -> str:
    """Start a worker in this confinement, with no files yet, and ask it whether it runs: "" when it answered, else why not."""
    try:
        worker = WorkerProcess(confinement, None)
        worker.hello()
    except (OSError, StudentError) as error:
        return str(error)
    _here.worker = worker
    with _taking:
        _kept.append(worker)
        older = _kept[:-1]  # another probe's (a test's second choice of tier)
        del _kept[:-1]
    for worker in older:
        worker.stop()
    return ""


def take(confinement) -> WorkerProcess:
    """A worker started in this confinement, given its files later: the probe's while it runs, else a new one."""
    with _taking:
        kept = _kept.pop() if _kept else None
    if kept is not None and kept.confinement.tier == confinement.tier and kept.process.poll() is None:
        return kept
    if kept is not None:
        kept.stop()
    return WorkerProcess(confinement, None)


def stay() -> None:
    """Wait while the worker this thread's probe made runs.

    A worker outside a PID namespace asks, once given its files, to be killed when the thread that
    started it ends (PR_SET_PDEATHSIG, grader.sandbox.worker.limits): a probe's thread of its own stays.
    """
    if (worker := getattr(_here, "worker", None)) is not None:
        worker.process.wait()


@atexit.register
def _stop_kept() -> None:
    """Stop the probe's worker if no run took it."""
    while _kept:
        _kept.pop().stop()
