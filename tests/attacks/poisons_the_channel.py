# module: heads
"""Writes malformed frames on the worker's channel to the grader, hoping to crash or confuse its decoder."""

import gc
import json
import struct

from .softmax import softmax  # noqa: F401  (so the worker has stand-ins and a channel)


def _channel():
    return next(o for o in gc.get_objects() if type(o).__name__ == "Channel")


def attention_head(x, w_q, w_k, w_v):
    channel = _channel()
    head = json.dumps({"tree": {"ask": ["a", 0]}, "sizes": [10**12]}).encode()
    channel.write(struct.pack("<I", len(head)) + head + b"\x93NUMPY\x01\x00" + b"\xff" * 64)
    return channel.read()


def multi_head_attention(x, heads, w_o):
    channel = _channel()
    channel.write(b"\xff" * 100)
    return channel.read()
