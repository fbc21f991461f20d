"""The student's code behind the worker boundary for one run: its workers, started early, and the run's time budget."""

import threading
import time

from grader import kit
from grader.check.checks.harness import BUDGET, reference_for, reference_functions
from grader.sandbox import isolation
from grader.sandbox.errors import StudentError
from grader.sandbox.student import Student


class Workers:
    """The student's code behind the worker boundary: one worker per set of functions served by the reference.

    budget: seconds for the whole run; once it is spent, every call fails at once as a timeout.
    """

    def __init__(self, folder, timeout: float = 10.0, budget: float = BUDGET):
        self.folder = folder
        self.timeout = timeout
        self.deadline = time.monotonic() + budget
        self.budget = budget
        self.started: dict[frozenset, Student] = {}
        self.broken: dict[tuple, StudentError] = {}  # (module, function or None) -> the error that repeats
        self.ready: dict[frozenset, threading.Event] = {}  # workers started early, once started
        self.closing = threading.Event()
        self.threads: list[threading.Thread] = []

    def start_early(self, exercises) -> None:
        """Start the workers these exercises' checks use, each in a thread, while pytest collects the checks.

        Starting one is mostly waiting on its process (bubblewrap, Python, numpy), so they start side by
        side, once the confinement is chosen (its probe, run once per process, starts a worker too).
        Each thread lives until close(): a worker dies with the thread that started it (PR_SET_PDEATHSIG).
        """
        chosen, with_reference = threading.Event(), not kit.is_student_kit()
        threading.Thread(target=_choose, args=(chosen,), daemon=True, name="isolation-probe").start()
        for name in exercises:
            reference = reference_functions(name) if with_reference else frozenset()
            if reference not in self.started:
                student = self.started[reference] = Student(self.folder, reference=reference_for(reference), timeout=self.timeout)
                ready = self.ready[reference] = threading.Event()
                thread = threading.Thread(target=_start, args=(student, chosen, ready, self.closing), daemon=True, name="worker-start")
                thread.start()
                self.threads.append(thread)

    def get(self, reference: frozenset) -> Student:
        """The worker with these functions served by the reference, started on first use."""
        if reference in self.ready:
            self.ready.pop(reference).wait()
        if reference not in self.started:
            self.started[reference] = Student(self.folder, reference=reference_for(reference), timeout=self.timeout)
        return self.started[reference]

    def limit(self) -> float:
        """Seconds the next call may take: its own limit, or what is left of the run's budget."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StudentError("timeout", f"grading this submission used all of its {self.budget:g} s, so the checks left were not run.")
        return min(self.timeout, left)

    def close(self):
        """Stop every worker."""
        for ready in self.ready.values():
            ready.wait()
        self.closing.set()
        for thread in self.threads:
            thread.join()
        for worker in self.started.values():
            worker.close()
        self.started.clear()


def _choose(chosen: threading.Event) -> None:
    """Choose the run's confinement (probing it, the first time), then let the workers start."""
    try:
        isolation.choose()
    except isolation.IsolationError:
        pass  # each worker's start says so
    finally:
        chosen.set()


def _start(student: Student, chosen: threading.Event, ready: threading.Event, closing: threading.Event) -> None:
    """Start a worker once the confinement is chosen, then stay until the run ends: the worker lives as long as this thread."""
    chosen.wait()
    try:
        student.start()
    finally:
        ready.set()
    closing.wait()
