"""Hostile frames, generated: whatever bytes a student-side process writes, the decoders refuse or read them, the
framed pipe splits them or fails cleanly, and the reference helper answers and lives. Never the grader's fault."""

import json
import os
import struct
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.check.checks.harness import reference_for
from grader.paths import SOLUTIONS_DIR
from grader.sandbox import asks
from grader.sandbox.errors import StudentError
from grader.sandbox.handle import StudentCode
from grader.sandbox.helper import HELPER
from grader.sandbox.pipes import Deadline, FramedPipe, PipeFailed
from grader.sandbox.worker.codec import NPY_MAGIC, ArrayHead, decode, encode
from grader.sandbox.worker.frames import HEAD

QUICK = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
HUGE = [0, 1, 2, 3, 10**20, 2**31, 2**62, 2**63, 2**64]
DESCRS = [
    "<f8",
    "<f4",
    ">f4",
    "<f2",
    "<f16",
    "|b1",
    "<i8",
    "<u2",
    "<c16",
    "|S3",
    "<U2",
    "|S0",
    "<U0",
    "=f8",
    "<f3",
    "|V8",
    "<M8",
    "|O8",
    "<f8 ",
]
NAMES = [*asks.CONTRACTS, "batches.next", "solutions.softmax", "", "softmax.softmax.softmax"]


def npy(descr: str, shape: tuple, data: bytes) -> bytes:
    """.npy bytes as the grader writes them, for any descr and shape, with the given data (the right length or not)."""
    header = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    header += " " * (-(len(NPY_MAGIC) + 2 + len(header) + 1) % 64) + "\n"
    return NPY_MAGIC + struct.pack("<H", len(header)) + header.encode("latin1") + data


def message(tree, blobs: list[bytes]) -> bytes:
    """A message as encode writes one, for any tree and blobs."""
    head = json.dumps({"tree": tree, "sizes": [len(blob) for blob in blobs]}).encode()
    return struct.pack("<I", len(head)) + head + b"".join(blobs)


@st.composite
def arrays(draw) -> bytes:
    """The .npy bytes of an array a worker might send: any dtype, any shape (huge axes among them), its data or other bytes."""
    descr, shape = (
        draw(st.sampled_from(DESCRS)),
        tuple(draw(st.lists(st.sampled_from(HUGE), max_size=36))),
    )
    try:
        size = np.dtype(descr.strip()).itemsize * int(np.prod([n for n in shape], dtype=object))
    except TypeError:
        size = 0
    data = b"\x00" * size if size <= 256 and draw(st.booleans()) else draw(st.binary(max_size=64))
    return npy(descr, shape, data)


@st.composite
def frames(draw) -> bytes:
    """A frame a student-side process might write: any bytes, a message with hostile arrays, or an ask of any name and arguments."""
    kind = draw(st.sampled_from(["bytes", "array", "ask", "value"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "array":
        blob = draw(arrays())
        return message(
            ["d", [["ask", draw(st.sampled_from(NAMES))], ["args", ["t", [["a", 0]]]]]], [blob]
        )
    return encode(
        {"ask": draw(st.sampled_from(NAMES)), "args": draw(values())}
        if kind == "ask"
        else draw(values())
    )


def values():
    """Any value the codec carries: numbers out of range, odd dtypes, nesting, the kit's own stand-ins' shapes."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from([10**400, -(10**400), 2**63, -(2**63) - 1]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8),
    )
    small = st.builds(
        lambda dtype, shape: np.zeros(shape, dtype=dtype),
        st.sampled_from(
            [
                "float64",
                "float32",
                "float16",
                "longdouble",
                "int64",
                "bool",
                "complex128",
                "U2",
                "S2",
            ]
        ),
        st.lists(st.integers(0, 3), max_size=4).map(tuple),
    )
    leaves = st.one_of(scalars, small)
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.lists(inner, max_size=4).map(tuple),
            st.dictionaries(st.text(max_size=4), inner, max_size=4),
        ),
        max_leaves=12,
    ).map(lambda value: value if isinstance(value, tuple) else (value,))


def decoded(frame: bytes, outline: bool):
    """("ok", value) or ("refused", None): decode's answer, which must be a value or ValueError, nothing else."""
    try:
        return "ok", decode(frame, outline=outline)
    except ValueError:
        return "refused", None


@QUICK
@given(frames())
def test_every_frame_is_read_or_refused_with_valueerror_and_the_outline_refuses_what_the_full_read_refuses(
    frame,
):
    (full, value), (outlined, outline) = decoded(frame, outline=False), decoded(frame, outline=True)
    assert full == outlined
    if full == "ok":
        assert _shapes(value) == _shapes(outline)


def _shapes(value) -> list:
    """The dtypes and shapes of the arrays in a decoded value, in order, whether arrays or outlines."""
    if type(value) is np.ndarray or type(value) is ArrayHead:
        return [(value.dtype, value.shape)]
    if type(value) in (list, tuple):
        return [shape for item in value for shape in _shapes(item)]
    if type(value) is dict:
        return [shape for item in value.values() for shape in _shapes(item)]
    return []


def test_an_array_of_shape_0_by_10_to_the_20_is_refused_by_both_reads():
    frame = message(["t", [["a", 0]]], [npy("<f8", (0, 10**20), b"")])
    assert decoded(frame, outline=False) == decoded(frame, outline=True) == ("refused", None)


@pytest.fixture(scope="module")
def student():
    """The grader's side of a worker that serves every function the reference may answer; no worker is started."""
    with StudentCode(SOLUTIONS_DIR, reference=reference_for(frozenset(asks.CONTRACTS))) as code:
        yield code


@QUICK
@given(frame=frames())
def test_the_grader_answers_any_ask_or_calls_it_the_students_and_the_helper_lives(student, frame):
    HELPER.start_soon()
    helper = HELPER.process
    try:
        answer = student._answer(frame, [])
    except ValueError:
        answer = None  # the exchange makes this the student's bad output
    except StudentError as error:
        pytest.fail(f"{error.kind}: {error.message}")
    assert answer is None or type(decode(answer)) is dict
    assert HELPER.process is helper and helper.poll() is None


@QUICK
@given(frame=frames())
def test_the_helper_answers_any_frame_it_is_sent_and_lives(frame):
    """Past the grader's own checks too: a frame that is no ask, or an ask the reference cannot read, is answered with an error."""
    from solutions.softmax import softmax

    HELPER.start_soon()
    helper = HELPER.process
    answer = decode(HELPER.answer(softmax, frame))
    assert type(answer) is dict and ("value" in answer or type(answer.get("error")) is str)
    assert HELPER.process is helper and helper.poll() is None


class Pipe:
    """A child's stdout and stdin as a FramedPipe sees them, fed from this process: what a child wrote, then its end."""

    def __init__(self, written: bytes):
        read, write = os.pipe()
        self.stdout, self.stdin = os.fdopen(read, "rb", buffering=0), open(os.devnull, "wb")
        self.pid, self.ended = read, threading.Event()
        threading.Thread(target=self._write, args=(write, written), daemon=True).start()

    def _write(self, fd: int, data: bytes):
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)
        self.ended.set()

    def poll(self):
        return 0 if self.ended.is_set() else None

    def wait(self, timeout=None):
        self.ended.wait(timeout)
        return self.poll()


def parsed(data: bytes, cap: int) -> tuple[list[bytes], str]:
    """The frames in bytes and how they end ("ended" or "too_big"), read by hand."""
    found, at = [], 0
    while len(data) - at >= HEAD.size:
        (size,) = HEAD.unpack_from(data, at)
        if size > cap:
            return found, "too_big"
        if len(data) - at - HEAD.size < size:
            break
        found.append(data[at + HEAD.size : at + HEAD.size + size])
        at += HEAD.size + size
    return found, "ended"


@st.composite
def streams(draw) -> bytes:
    """What a child may write on its frame pipe: frames, lengths of any size, and cut ends."""
    pieces = draw(
        st.lists(
            st.one_of(
                st.binary(max_size=40).map(lambda b: HEAD.pack(len(b)) + b), st.binary(max_size=20)
            ),
            max_size=6,
        )
    )
    return b"".join(pieces)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(streams(), st.sampled_from([0, 8, 64, 1 << 20]))
def test_the_framed_pipe_hands_over_exactly_the_frames_written_then_fails_cleanly(data, cap):
    pipe = FramedPipe(Pipe(data), cap, "test")  # type: ignore[arg-type]
    expected, end = parsed(data, cap)
    got = []
    with pytest.raises(PipeFailed) as failed:
        while True:
            got.append(bytes(pipe.receive(Deadline(5.0))))
    pipe.close()
    assert got == expected and failed.value.kind == end
