"""Crashes the interpreter by reading address 0."""

import ctypes


def softmax(x):
    return ctypes.string_at(0)
