"""Correct, but starts a thread that prints forever."""

import numpy as np


def _softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        e = np.exp(x - top)
    return e / np.sum(e, axis=-1, keepdims=True)

import threading
import time


def _chatter():
    while True:
        print("still here " * 100)
        time.sleep(0.001)


def softmax(x):
    threading.Thread(target=_chatter, daemon=True).start()
    return _softmax(x)
