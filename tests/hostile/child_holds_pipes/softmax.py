"""Correct, but leaves children behind that hold every pipe, one in its own session."""

import numpy as np


def _softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        e = np.exp(x - top)
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax(x):
    import os
    import subprocess

    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pids")
    os.makedirs(folder, exist_ok=True)
    child = subprocess.Popen(["sleep", "300"], close_fds=False)  # inherits stdout and every pipe
    if os.fork() == 0:  # a second child: its own session, so the worker's process group misses it
        os.setsid()
        if os.fork() == 0:
            with open(os.path.join(folder, f"{os.getpid()}.pid"), "w") as f:
                f.write(str(os.getpid()))
            import time

            while True:
                time.sleep(1)
        os._exit(0)
    with open(os.path.join(folder, f"{child.pid}.pid"), "w") as f:
        f.write(str(child.pid))
    return _softmax(x)
