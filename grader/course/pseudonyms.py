"""Stable pseudonyms for the anonymised reports: an HMAC of each student's id under a key the instructor keeps apart.

The key is a file of its own (made, readable by its owner only, when missing) and never goes into a
report: with the same key, a student has the same pseudonym in every report and every run, so two
reports can be read side by side; without it, a pseudonym cannot be traced back to its student.
"""

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from grader.course.errors import ReportError

PREFIX = "anon-"
DIGITS = 10  # hex digits of the HMAC kept: 40 bits, so two of 10,000 students share one with a chance under 1 in 20,000
KEY_BYTES = 32


def key(path: Path) -> bytes:
    """The key in path, made there (32 random bytes, as hex, mode 0600) when the file does not exist."""
    path = Path(path)
    if not path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as error:
            raise ReportError(
                f"cannot make the key file {path} ({error.strerror}): name a file in a folder you can write"
            ) from None
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(KEY_BYTES) + "\n")
    try:
        text = path.read_text(encoding="ascii").strip()
        value = bytes.fromhex(text)
    except (OSError, UnicodeDecodeError, ValueError):
        raise ReportError(f"{path} is not a key this kit made (hex digits on one line): give the key file of your earlier reports, "
                          "or a new path to make one") from None  # fmt: skip
    if len(value) < 16:
        raise ReportError(
            f"{path} holds a key of {len(value)} bytes: a key has at least 16 (a new path makes one of {KEY_BYTES})"
        )
    return value


def pseudonym(secret: bytes, student_id: str) -> str:
    """The student's pseudonym under the key: the same for the same id and key, always."""
    digest = hmac.new(
        secret, student_id.encode("utf-8", "surrogateescape"), hashlib.sha256
    ).hexdigest()
    return PREFIX + digest[:DIGITS]
