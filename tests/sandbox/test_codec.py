"""The codec's message, made whole or in pieces: the same bytes, its arrays as numpy itself saves them."""

import hashlib
import io
import json
import struct

import numpy as np
import pytest

from grader.check.checks.workers import _digest
from grader.sandbox.worker.codec import Foreign, as_sent, encode, may_be_ask, pieces, sent_back

VALUES = [
    np.arange(6.0).reshape(2, 3),
    np.arange(6).reshape(2, 3).T,  # not C-contiguous
    np.zeros((0, 3), dtype=">f4"),
    np.float32(1.5),
    [1, 2.5, "s\ud800", None, (np.array([True]), {"k": np.array(["ab", "c"])})],
    Foreign("T", "text"),
]


def saved(array: np.ndarray) -> bytes:
    """The array as numpy.save writes it, in .npy format 1.0."""
    out = io.BytesIO()
    np.lib.format.write_array(out, np.ascontiguousarray(array), version=(1, 0))
    return out.getvalue()


@pytest.mark.parametrize("value", VALUES)
def test_the_pieces_joined_are_the_message(value):
    assert b"".join(pieces(value)) == encode(value)


def test_a_message_is_its_head_then_each_array_as_numpy_saves_it():
    arrays = [np.arange(6.0).reshape(2, 3).T, np.array([1 + 2j])]
    blobs = [saved(array) for array in arrays]
    head = json.dumps(
        {"tree": ["t", [["a", 0], ["a", 1]]], "sizes": [len(blob) for blob in blobs]}
    ).encode()
    assert encode(tuple(arrays)) == struct.pack("<I", len(head)) + head + b"".join(blobs)


def test_the_memo_s_digest_is_the_sha256_of_the_call_as_sent_to_be_hashed():
    args = (np.arange(12.0).reshape(3, 4)[:, ::2], [1, 2.0])
    message = encode((["softmax.softmax"], "heads", "attention_head", args))
    assert _digest(frozenset({"softmax.softmax"}), "heads", "attention_head", args) == (
        hashlib.sha256(message).digest(),
        len(message),
    )


def test_an_ask_is_told_from_a_reply_at_a_glance():
    x = np.ones((2, 3))
    asks = [{"ask": "batches.next", "args": ()}, {"ask": "softmax.softmax", "args": (x,)}]
    replies = [
        {"value": x, "args": (x,), "seconds": 0.1, "warnings": ()},
        {"error": "raised", "message": '"ask"'},
        {"value": {"ask": 1}},
    ]
    assert all(may_be_ask(encode(ask)) for ask in asks)
    assert not any(may_be_ask(encode(reply)) for reply in replies)
    assert not may_be_ask(b"") and not may_be_ask(b"\x00" * 3)


def test_only_large_arrays_left_byte_for_byte_as_they_came_go_back_as_none():
    """A large array whose bytes are unchanged (NaN included) is None; one changed in a NaN's payload, reshaped or small is sent."""
    big = np.full((100, 100), np.nan)
    payload = big.copy()
    payload.view(np.uint64)[0, 0] ^= 1  # still NaN, another NaN
    args = (big, payload.copy(), big.copy(), np.ones(3), {"w": big})
    copies = as_sent(args)
    assert sorted(copies) == [0, 1, 2]
    args[1].view(np.uint64)[0, 0] ^= 1  # back to the first NaN's bytes: a change all the same
    args[2].shape = (10_000,)
    back, same = sent_back(args, copies)
    assert (
        same == [0]
        and back[0] is None
        and back[1] is args[1]
        and back[2] is args[2]
        and back[3] is args[3]
        and back[4] is args[4]
    )
