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

    subprocess.Popen(["sleep", "300"], close_fds=False)  # inherits stdout and every pipe it can
    if os.fork() == 0:  # a second child: its own session, so the worker's process group misses it
        os.setsid()
        if os.fork() == 0:
            os.execve("/bin/sleep", ["sleep", "301"], {})  # and no environment to be recognised by
        os._exit(0)
    return _softmax(x)
