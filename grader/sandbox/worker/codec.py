"""The codec: values cross the worker boundary as a JSON head and `.npy` bytes, never pickle."""

import functools
import json
import math
import re
import struct
from dataclasses import dataclass

import numpy as np

from grader.sandbox.worker.toymodel import BatchFeed, LinearModel

MAX_FRAME = 512 << 20  # bytes in one message
MAX_WARNINGS = 10  # warnings kept per call
WARNING_CHARS = 200  # characters kept of each
MAX_DEPTH = 32  # nesting of lists, tuples and dicts in a value
MAX_DIMS = 32  # axes of an array (numpy 1's limit)
ARRAY_KINDS = "biufcSU"  # bool, integers, floats, complex, bytes, str: no objects
KEY_TYPES = (str, int, float, bool, type(None))
NPY_MAGIC = b"\x93NUMPY\x01\x00"
NPY_HEADER = re.compile(
    r"\{'descr': '(?P<descr>[<>|=]?[biufcSU]\d+)', 'fortran_order': False, 'shape': \((?P<shape>[\d, ]*)\), \} *\n"
)
PACKAGE = "_submission"  # the private name the student's folder is imported under
# an argument array this large goes back as None when the call left its bytes as they came
SAME_BYTES = 64 << 10


@dataclass
class Foreign:
    """A value of a type that may not cross the boundary, by type name and a short repr."""

    type_name: str
    text: str


@dataclass(frozen=True)
class ArrayHead:
    """An array's dtype and shape, read from its .npy header without its data: an ask's outline."""

    dtype: np.dtype
    shape: tuple

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass
class ToyModel:
    """Stands for the kit's LinearModel with these params: {"w": (C, O), "b": (O,)}."""

    params: dict


@dataclass
class Batches:
    """Stands for an iterator over these (x, y) pairs; after a call, taken says how many were used.

    Counted by the grader, which hands out each pair when the worker asks for it (grader.sandbox.worker.toymodel.TAKEN);
    sent: the pairs go along with the call instead and the worker counts them, a count the student's code could
    change (for a run whose losses and weights are checked pair by pair, one round trip per step saved).
    """

    pairs: list
    taken: int = 0
    sent: bool = False


def encode(value) -> bytes:
    """A message: a JSON head describing the value, then the arrays as .npy bytes."""
    return b"".join(pieces(value))


def pieces(value) -> list:
    """encode's message in pieces, not joined: bytes, and each array's data where it is (to hash a message without making it)."""
    blobs: list[tuple[bytes, np.ndarray]] = []
    tree = _tree(value, blobs, 0)
    head = json.dumps(
        {"tree": tree, "sizes": [len(header) + data.nbytes for header, data in blobs]}
    ).encode()
    return [struct.pack("<I", len(head)), head, *(piece for blob in blobs for piece in blob)]


def as_sent(args: tuple) -> dict[int, np.ndarray]:
    """Copies of the large plain arrays among a call's arguments, by position: what sent_back compares them with."""
    return {
        i: arg.copy()
        for i, arg in enumerate(args)
        if type(arg) is np.ndarray and arg.nbytes >= SAME_BYTES
    }


def sent_back(args: tuple, copies: dict[int, np.ndarray]) -> tuple[tuple, list[int]]:
    """The arguments to send back after a call, each large array the call left as it came replaced by None, and their positions.

    Unchanged means the same dtype, shape and bytes (NaN included); the other side has those bytes already.
    """
    same = [i for i, before in copies.items() if _same_bytes(before, args[i])]
    return tuple(None if i in same else arg for i, arg in enumerate(args)), same


def _same_bytes(before: np.ndarray, after) -> bool:
    if (
        type(after) is not np.ndarray
        or after.dtype != before.dtype
        or after.shape != before.shape
        or not after.flags.c_contiguous
    ):
        return False
    return bool(np.array_equal(before.reshape(-1).view(np.uint8), after.reshape(-1).view(np.uint8)))


def may_be_ask(frame: bytes) -> bool:
    """Whether a frame starts as encode writes an ask ({"ask": ..., "args": ...}): a glance, without decoding it.

    False for every reply encode writes; a hand-made ask written otherwise is False too, and is decoded the slow way.
    """
    return frame[4 : 4 + len(_ASK_HEAD)] == _ASK_HEAD


def array_bytes(value, depth: int = 0) -> int:
    """The bytes of the arrays in a value, counted before any is copied (lists, tuples and dicts, a few levels deep)."""
    if type(value) is np.ndarray:
        return value.nbytes
    if depth > 8:
        return 0
    if type(value) in (list, tuple):
        return sum(array_bytes(item, depth + 1) for item in value[:10000])
    if type(value) is dict:
        return sum(array_bytes(item, depth + 1) for item in list(value.values())[:10000])
    return 0


def decode(data, live: bool = False, outline: bool = False):
    """The value of a message; live (in the worker) turns ToyModel and Batches into working objects.

    outline: each array is an ArrayHead, its data not read. Any malformed message raises ValueError.
    """
    try:
        data = memoryview(data)
        (size,) = struct.unpack_from("<I", data)
        head = json.loads(bytes(data[4 : 4 + size]))
        blobs, start = [], 4 + size
        for length in head["sizes"]:
            if type(length) is not int or length < 0:
                raise ValueError("a message whose head gives a size that is not a length")
            blobs.append(data[start : start + length])
            start += length
        if start != len(data):
            raise ValueError("message length does not match its head")
        return _value(head["tree"], blobs, live, outline)
    except ValueError:
        raise
    except (
        struct.error,
        KeyError,
        TypeError,
        IndexError,
        AttributeError,
        RecursionError,
        OverflowError,
    ) as error:
        raise ValueError(f"a malformed message ({type(error).__name__})") from None


def _tree(value, blobs, depth):
    """The JSON description of a value; its arrays appended to blobs."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is np.ndarray and value.dtype.kind in ARRAY_KINDS and not value.dtype.hasobject:
        return ["a", _blob(value, blobs)]
    if (
        isinstance(value, np.generic)
        and kind.__module__ == "numpy"
        and value.dtype.kind in ARRAY_KINDS
    ):
        return ["s", _blob(np.asarray(value), blobs)]
    if (
        kind in (list, tuple, dict, ToyModel, LinearModel, Batches, BatchFeed)
        and depth >= MAX_DEPTH
    ):
        raise ValueError(f"a value nested more than {MAX_DEPTH} levels deep")
    if kind is list or kind is tuple:
        return ["l" if kind is list else "t", [_tree(item, blobs, depth + 1) for item in value]]
    if kind is dict and all(type(key) in KEY_TYPES for key in value):
        return ["d", [[key, _tree(item, blobs, depth + 1)] for key, item in value.items()]]
    if kind is ToyModel or kind is LinearModel:
        return ["m", _tree(value.params, blobs, depth + 1)]
    if kind is Batches:
        return [
            "b",
            _tree(value.pairs, blobs, depth + 1),
            int(value.taken),
            *([1] if value.sent else []),
        ]
    if kind is BatchFeed:  # back from the worker: the count alone, the grader has the pairs
        return ["b", ["l", []], int(value.taken)]
    if kind is Foreign:
        return ["f", value.type_name, value.text]
    if kind is np.ndarray:
        return ["f", f"numpy.ndarray with dtype {value.dtype}", describe(value)[1]]
    return ["f", *describe(value)]


def _blob(array, blobs):
    """Append the array as .npy (format 1.0, C order): its header's bytes and its data, not copied; its index among the blobs."""
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    blobs.append((_npy_header(array.dtype.str, array.shape), array))
    return len(blobs) - 1


@functools.lru_cache(maxsize=256)
def _npy_header(descr: str, shape: tuple) -> bytes:
    """The .npy header (format 1.0, C order) of an array of this dtype and shape, padded to 64 bytes."""
    header = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    header += " " * (-(len(NPY_MAGIC) + 2 + len(header) + 1) % 64) + "\n"
    return NPY_MAGIC + struct.pack("<H", len(header)) + header.encode("latin1")


def describe(value):
    """Type name and a short repr of a value that may not cross; its repr may be student code."""
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", "object")
    if module.startswith(PACKAGE + "."):
        module = module[len(PACKAGE) + 1 :]
    type_name = name if module in ("", "builtins") else f"{module}.{name}"
    try:
        text = repr(value)
    except BaseException:  # a student's __repr__ may raise anything
        text = f"<{type_name} whose repr failed>"
    if type(text) is not str:
        text = f"<{type_name}>"
    return type_name, text[:300]


def _value(node, blobs, live, outline=False):
    """The value described by a JSON node; a str holding lone surrogates has them written as escapes (\\ud800)."""
    if type(node) is str:
        return shown(node)
    if node is None or type(node) in (bool, int, float):
        return node
    tag, *rest = node
    if tag == "a":
        return _head(blobs[rest[0]]) if outline else _array(blobs[rest[0]])
    if tag == "s":
        array = _array(blobs[rest[0]])
        if array.ndim != 0:
            raise ValueError("a numpy scalar must be 0-dimensional")
        return array[()]
    if tag == "l":
        return [_value(item, blobs, live, outline) for item in rest[0]]
    if tag == "t":
        return tuple(_value(item, blobs, live, outline) for item in rest[0])
    if tag == "d":
        if not all(type(key) in KEY_TYPES for key, _ in rest[0]):
            raise ValueError("dict keys must be plain scalars")
        return {
            shown(key) if type(key) is str else key: _value(item, blobs, live, outline)
            for key, item in rest[0]
        }
    if tag == "f":
        return Foreign(shown(str(rest[0])), shown(str(rest[1])))
    if tag == "m":
        params = _value(rest[0], blobs, live, outline)
        return LinearModel(params) if live else ToyModel(params)
    if tag == "b":
        pairs = _value(rest[0], blobs, live, outline)
        return BatchFeed(pairs) if live else Batches(pairs, int(rest[1]))
    raise ValueError(f"unknown tag {tag!r}")


def shown(text: str) -> str:
    """The text, with each lone surrogate (which no UTF-8 file, terminal or XML can hold) written as its escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _array(blob):
    """A writable ndarray from .npy bytes; only plain dtypes, never pickled objects."""
    head, start = _parsed(blob)
    return np.frombuffer(memoryview(blob)[start:], dtype=head.dtype).reshape(head.shape).copy()


def _head(blob) -> ArrayHead:
    """The dtype and shape of .npy bytes, checked against their length; the data left unread."""
    return _parsed(blob)[0]


def _parsed(blob) -> tuple[ArrayHead, int]:
    """The ArrayHead of .npy bytes and where their data starts."""
    blob = memoryview(blob)
    if bytes(blob[: len(NPY_MAGIC)]) != NPY_MAGIC:
        raise ValueError("not .npy bytes")
    (size,) = struct.unpack_from("<H", blob, len(NPY_MAGIC))
    start = len(NPY_MAGIC) + 2 + size
    dtype, shape = _header(bytes(blob[len(NPY_MAGIC) + 2 : start]))
    if dtype.itemsize * math.prod(shape) != len(blob) - start:
        raise ValueError("an array whose size does not match its data")
    return ArrayHead(dtype, shape), start


@functools.lru_cache(maxsize=256)
def _header(header: bytes):
    """The dtype and shape in an .npy header, which must be exactly the one the grader writes for them."""
    found = NPY_HEADER.fullmatch(header.decode("latin1"))
    if found is None:
        raise ValueError("an .npy header the grader does not write")
    dtype = np.dtype(found["descr"])
    if dtype.kind not in ARRAY_KINDS or dtype.hasobject or dtype.itemsize == 0:
        raise ValueError(f"an array of dtype {dtype}")
    shape = tuple(int(n) for n in found["shape"].replace(",", " ").split())
    if len(shape) > MAX_DIMS or dtype.itemsize * math.prod(n for n in shape if n) > MAX_FRAME:
        raise ValueError(
            f"an array of {len(shape)} axes {str(shape)[:80]}, more than any message can hold"
        )
    if _npy_header(dtype.str, shape)[len(NPY_MAGIC) + 2 :] != header:
        raise ValueError("an .npy header the grader does not write")
    return dtype, shape


_ASK_HEAD = encode({"ask": "", "args": ()})[4:].partition(b'""')[0]  # {"tree": ["d", [["ask",
