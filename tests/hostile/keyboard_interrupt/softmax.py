"""Pretends the user pressed Ctrl-C."""


def softmax(x):
    raise KeyboardInterrupt
