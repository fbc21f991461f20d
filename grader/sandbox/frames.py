"""The frames on the pipes of a worker and of the reference helper: a frame is its length (8 bytes, little-endian) and its bytes."""

import struct

END_OF_CALL = b"\x00\x1eattention-by-hand: end of call\x1e\x00"  # on a worker's output pipe, after each reply's output


def read_exactly(pipe, size) -> bytearray | None:
    """Exactly size bytes from a pipe, or None at end of file (not copied into bytes: a frame is only read)."""
    data = bytearray()
    try:
        while len(data) < size:
            chunk = pipe.read(min(size - len(data), 1 << 20))
            if not chunk:
                return None
            data += chunk
    except (OSError, ValueError):
        return None
    return data


def write_frame(pipe, data) -> None:
    """One frame into a pipe, buffered or not: its length, then its bytes (not joined, which would copy a large one again)."""
    for piece in (struct.pack("<Q", len(data)), data):
        view = memoryview(piece)
        while view:  # an unbuffered pipe may take only part
            view = view[pipe.write(view) :]
    pipe.flush()
