"""The frames on the pipes between the grader and a child that runs student code or answers for it, on either side.

A frame is its length (8 bytes, little-endian) and its bytes. Whoever reads a frame sets the most
it takes: a frame that announces more is refused before any of it is read.
"""

import struct

HEAD = struct.Struct("<Q")
END_OF_CALL = b"\x00\x1eattention-by-hand: end of call\x1e\x00"  # on a worker's output pipe, after each reply's output


class FrameTooBig(Exception):
    """A frame announced more bytes than its reader takes; size is what it announced."""

    def __init__(self, size: int):
        super().__init__(f"a frame of {size} bytes")
        self.size = size


def read_frame(pipe, cap: int) -> bytearray | None:
    """The next frame's bytes from a pipe, None at end of file; FrameTooBig, its bytes left unread, when it announces more than cap."""
    head = read_exactly(pipe, HEAD.size)
    if head is None:
        return None
    (size,) = HEAD.unpack(head)
    if size > cap:
        raise FrameTooBig(size)
    return read_exactly(pipe, size)


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
    for piece in (HEAD.pack(len(data)), data):
        view = memoryview(piece)
        while view:  # an unbuffered pipe may take only part
            view = view[pipe.write(view) :]
    pipe.flush()
