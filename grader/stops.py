"""Ctrl-C, a kill and a closed terminal stop a command alike, so that each ends its processes and folders.

Every command already stops cleanly on Ctrl-C (KeyboardInterrupt). A kill (SIGTERM: `kill`, a pod
being stopped) or a closed terminal (SIGHUP) would end the process at once and leave its checks'
processes and temporary folders behind; as_ctrl_c() makes them raise KeyboardInterrupt too.
"""

import signal
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

# the signals that stop a command, where the OS has them; Ctrl-C's first
STOPS = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]
DEFAULTS = (signal.default_int_handler, signal.SIG_DFL)
received: list[int] = []  # the signals that stopped this process, first first


def _stop(signum: int, frame) -> None:
    received.append(signum)
    raise KeyboardInterrupt


def ours(stop: int) -> bool:
    """Whether a stopping signal is the kit's to handle: not taken by another (ignored, as in a background job)."""
    return signal.getsignal(stop) in (*DEFAULTS, _stop)


@contextmanager
def as_ctrl_c() -> Iterator[None]:
    """While a command runs (in the main thread): each stopping signal that is the kit's raises KeyboardInterrupt."""
    received.clear()
    with handled_by(_stop, [stop for stop in STOPS if ours(stop)]):
        yield


def for_good() -> None:
    """As as_ctrl_c(), for the rest of the process: nbgrader's command line, whose run the kit does not wrap."""
    if threading.current_thread() is threading.main_thread():
        for stop in STOPS:
            if ours(stop):
                signal.signal(stop, _stop)


def status() -> int:
    """The exit status of a command a signal stopped: 128 + its number (130 for Ctrl-C, 143 for a kill)."""
    return 128 + (received[0] if received else signal.SIGINT)


def name() -> str:
    """What stopped the command, as its message says it."""
    first = received[0] if received else signal.SIGINT
    return "Ctrl-C" if first == signal.SIGINT else signal.Signals(first).name


def ignored() -> AbstractContextManager[None]:
    """While a command stops: a second Ctrl-C (or kill) would stop the stopping halfway."""
    return handled_by(signal.SIG_IGN, STOPS)


@contextmanager
def handled_by(handler, signals: list[int]) -> Iterator[None]:
    """These signals handled so meanwhile, then as before (in the main thread, the only one a handler can be set in)."""
    main = threading.current_thread() is threading.main_thread()
    before = {stop: signal.signal(stop, handler) for stop in signals if main}
    try:
        yield
    finally:
        for stop, was in before.items():
            signal.signal(stop, signal.SIG_DFL if was is None else was)
