"""Prints what a passing run looks like, on stdout and stderr, then returns a wrong answer."""

import json
import sys

import numpy as np

FAKE = {"total": {"points": 100.0, "max_points": 100.0}, "exercises": []}


def softmax(x):
    print("softmax PASSED\n" * 20 + "===== 40 passed in 0.1s =====")
    print(json.dumps(FAKE))
    print(json.dumps(FAKE), file=sys.stderr)
    sys.stdout.flush()
    return np.zeros_like(x)
