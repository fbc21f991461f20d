"""The student's code behind the worker boundary for one run: its workers, started early, and the run's time budget."""

import contextlib
import copy
import dataclasses
import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from grader import kit
from grader.check.checks.harness import BUDGET, reference_for, reference_functions
from grader.sandbox.errors import StudentError
from grader.sandbox.handle import Outcome, StudentCode
from grader.sandbox.helper import HELPER
from grader.sandbox.worker.codec import pieces
from grader.sandbox.worker.messages import not_written

PATIENCE = 3.0  # times its limit a call at the comparison's sizes may take: Python loops there are slow, not hung
# failures a call gives again on the same arguments (the others stop its function)
REMEMBERED = ("raised", "bad_output")
MEMO_BYTES = 64 << 20  # the arguments and answers kept, at most

# Functions of an exercise's own that some of its checks have the reference serve, in the full kit (a check of
# attention_head_backward builds on softmax_backward): those checks run in a worker of their own, started early too.
ALSO_SERVED = {"training": frozenset({"training.softmax_backward", "training.sgd_step"})}


def served_sets(exercise: str) -> list[frozenset[str]]:
    """The sets of functions the reference serves in this exercise's checks, in the full kit: one worker each."""
    base = reference_functions(exercise)
    return [base] + ([base | ALSO_SERVED[exercise]] if exercise in ALSO_SERVED else [])


class StudentCodePool:
    """The student's code behind the worker boundary: one worker per set of functions served by the reference.

    budget: seconds for the whole run; once it is spent, every call fails at once as a timeout.
    """

    def __init__(
        self,
        folder,
        timeout: float = 10.0,
        budget: float = BUDGET,
        unwritten: frozenset = frozenset(),
    ):
        self.folder = folder
        self.unwritten = unwritten  # modules that are the stubs as given (grader.check.untouched): no worker needed
        self.timeout = timeout
        self.factor = 1.0  # PATIENCE while a check runs at the comparison's sizes (patient())
        self.deadline = time.monotonic() + budget
        self.budget = budget
        self.started: dict[frozenset, StudentCode] = {}
        self.broken: dict[
            tuple, StudentError
        ] = {}  # (module, function or None) -> the error that repeats
        self.ready: dict[frozenset, threading.Event] = {}  # workers started early, once started
        self.closing = threading.Event()
        self.threads: list[threading.Thread] = []
        self.memo: dict[bytes, Outcome | StudentError] = {}  # a call's digest -> what came of it
        self.memo_bytes = 0

    def start_early(self, exercises) -> None:
        """Start the workers these exercises' checks use, each in a thread, so that they load while the checks are imported.

        The first to start chooses the confinement (its probe runs once per process; the others wait for it).
        """
        with_reference = not kit.is_student_kit()
        for name in (name for name in exercises if name not in self.unwritten):
            for reference in served_sets(name) if with_reference else [frozenset()]:
                self._start_early(reference)

    def _start_early(self, reference: frozenset) -> None:
        """Start the worker with these functions served by the reference, unless one is started already."""
        if reference:
            HELPER.start_soon()  # the reference's answers to the worker's asks: loaded while the checks are imported
        if reference in self.started:
            return
        handle = self.started[reference] = self._handle(reference)
        ready = self.ready[reference] = threading.Event()
        thread = threading.Thread(
            target=_start, args=(handle, ready, self.closing), daemon=True, name="worker-start"
        )
        thread.start()
        self.threads.append(thread)

    def get(self, reference: frozenset) -> StudentCode:
        """The worker with these functions served by the reference, started on first use."""
        if reference in self.ready:
            self.ready.pop(reference).wait()
        if reference not in self.started:
            self.started[reference] = self._handle(reference)
        return self.started[reference]

    def _handle(self, reference: frozenset) -> StudentCode:
        """The worker with these functions served by the reference."""
        return StudentCode(self.folder, reference=reference_for(reference), timeout=self.timeout)

    def call(self, reference: frozenset, module: str, function: str, args: tuple) -> Outcome:
        """module.function(*args) in the worker with these functions served by the reference; raises StudentError.

        Checks call the same function on the same arguments often (checks of one exercise draw their
        examples from the same strategies and seed): a call made before in this run is answered by
        what came of it then, as the student's code would answer again.
        """
        if module in self.unwritten:
            raise StudentError("not_started", not_written(function))
        key, size = _digest(reference, module, function, args)
        if key in self.memo:
            kept = self.memo[key]
            if isinstance(kept, StudentError):
                raise StudentError(kept.kind, kept.message, kept.output)
            return _copied(kept)
        try:
            outcome = self.get(reference).call(module, function, *args, timeout=self.limit())
        except StudentError as error:
            if error.kind in REMEMBERED:
                self._remember(key, size, error)
            raise
        self._remember(key, size, _copied(outcome))
        return outcome

    def _remember(self, key: bytes | None, size: int, what) -> None:
        if key is not None and self.memo_bytes + 2 * size <= MEMO_BYTES:
            # the answer is about as large as the call
            self.memo[key], self.memo_bytes = (what, self.memo_bytes + 2 * size)

    def limit(self) -> float:
        """Seconds the next call may take: its own limit (longer at the comparison's sizes), or what is left of the run's budget."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StudentError(
                "timeout",
                f"grading this submission used all of its {self.budget:g} s, so the checks left were not run.",
            )
        return min(self.timeout * self.factor, left)

    @contextlib.contextmanager
    def patient(self):
        """Calls made inside take up to PATIENCE times their limit: a correct loop over 16 x 141 x 141 entries takes
        5-8 s of CPU on a 2-core machine, more on a busy one, and the small drawn inputs have already shown a hang."""
        self.factor = PATIENCE
        try:
            yield
        finally:
            self.factor = 1.0

    def close(self):
        """Stop every worker."""
        for ready in self.ready.values():
            ready.wait()
        self.closing.set()
        for thread in self.threads:
            thread.join()
        stops = [worker.close for worker in self.started.values()]
        with ThreadPoolExecutor(
            max_workers=max(len(stops), 1), thread_name_prefix="worker-stop"
        ) as pool:
            for done in [
                pool.submit(stop) for stop in stops
            ]:  # at once: each waits for its processes to end (20-30 ms)
                done.result()
        self.started.clear()
        HELPER.forget()
        self.memo.clear()  # a process that grades many (nbgrader) would keep every memo
        self.memo_bytes = 0


def _digest(
    reference: frozenset, module: str, function: str, args: tuple
) -> tuple[bytes | None, int]:
    """A call's digest and its size in bytes; None for arguments the codec cannot carry (the call says so itself).

    The digest is the sha256 of the call as the codec encodes it, hashed piece by piece: the
    arrays are read where they are, never copied into a message (sha256 is the fastest hashlib has here).
    """
    try:
        message = pieces((sorted(reference), module, function, args))
    except ValueError:
        return None, 0
    found = hashlib.sha256()
    for piece in message:
        found.update(piece)
    return found.digest(), sum(memoryview(piece).nbytes for piece in message)


def _copied(outcome: Outcome) -> Outcome:
    """A copy of an outcome that shares nothing a check could change with it."""
    return dataclasses.replace(outcome, value=_fresh(outcome.value), args=_fresh(outcome.args))


def _fresh(value):
    """A deep copy of a value the codec gives: arrays and containers copied here (faster), anything else by copy.deepcopy."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is np.ndarray and not value.dtype.hasobject:
        return value.copy(order="K")
    if kind is list:
        return [_fresh(item) for item in value]
    if kind is tuple:
        return tuple(_fresh(item) for item in value)
    if kind is dict:
        return {key: _fresh(item) for key, item in value.items()}
    return copy.deepcopy(value)


def _start(handle: StudentCode, ready: threading.Event, closing: threading.Event) -> None:
    """Give a worker its files and wait for it to answer, then stay until the run ends.

    A worker dies with the thread that started it (PR_SET_PDEATHSIG); a fault says so at the worker's first call.
    """
    try:
        handle.start()
    finally:
        ready.set()
    closing.wait()
