"""`grader batch --shard I/N`: the I-th of N shares of a class, the same on every machine that is given the same folders.

An upload's share is read from the sha256 of its key (the student's name relative to the batch's folders,
grader.sandbox.intake), never from Python's hash(), which differs between processes: N machines given the same
folders grade every upload once between them, and `grader merge` joins their CSVs.
"""

import hashlib
import re
from dataclasses import dataclass

SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
MOST = 100_000  # more shards than any class has students is a typo


class ShardError(ValueError):
    """A --shard value that names no share, with what to write instead."""


@dataclass(frozen=True)
class Shard:
    """The number-th of count shares, counted from 1."""

    number: int
    count: int

    def holds(self, key: str) -> bool:
        """Whether the upload with this key is graded in this share."""
        return share(key, self.count) == self.number

    def __str__(self) -> str:
        return f"{self.number}/{self.count}"


def share(key: str, count: int) -> int:
    """The share (1 to count) an upload's key falls in: its key's sha256 as a number, modulo count."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse(text: str) -> Shard:
    """A --shard value: I/N with 1 <= I <= N, else a ShardError saying what is wrong."""
    found = SHARD.fullmatch(text)
    if not found:
        raise ShardError(
            f"{text!r} is not I/N: write the share to grade and how many there are, as 1/4 (the first of four)."
        )
    number, count = int(found[1]), int(found[2])
    if not 1 <= count <= MOST:
        raise ShardError(f"{text!r}: the number of shares must be from 1 to {MOST:,}.")
    if not 1 <= number <= count:
        raise ShardError(
            f"{text!r}: shares are counted from 1 to {count}. Kubernetes' JOB_COMPLETION_INDEX counts from 0: "
            f"pass --shard $((JOB_COMPLETION_INDEX + 1))/{count}."
        )
    return Shard(number, count)


def select(uploads: list, shard: Shard | None) -> list:
    """The uploads of this share, in the order given; all of them without a shard."""
    return uploads if shard is None else [upload for upload in uploads if shard.holds(upload.key)]
