"""An upload read within its bounds: its folders opened without following a link, its zips unpacked in place.

The mechanics of grader/sandbox/intake.py, which sets the bounds and says what a submission may be.
"""

import errno
import io
import os
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from grader import outlet

Parts = tuple[bytes, ...]  # a place in an upload: its folders' and its own name, as bytes

# never a student's work
SKIPPED = frozenset(
    {b"__MACOSX", b"__pycache__", b".grader", b".git", b".hypothesis", b".ipynb_checkpoints"}
)
CHUNK = 1 << 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
# POSIX; Windows goes by path
_BY_DESCRIPTOR = os.scandir in os.supports_fd and os.open in os.supports_dir_fd
# damaged, encrypted
UNPACKING = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    RuntimeError,
    NotImplementedError,
    ValueError,
)


@dataclass(frozen=True)
class Bounds:
    """What one upload may hold; past any of these it is refused before more is read (the values: intake.BOUNDS)."""

    module: int  # one module's bytes
    upload: int  # bytes read or unpacked for one upload, its archives' members included
    entries: int  # files, folders and archive members of one upload
    depth: int  # folders below the upload's top
    nesting: int  # archives within archives
    directory: int  # the list of an archive's members, read before any member
    notebook: int  # a notebook's bytes
    cells: int  # a notebook's cells


class Refused(Exception):
    """An upload the intake will not take; the message says why, in words for the student."""


def shown(place: Parts) -> str:
    """A place in an upload as the student sees it: each name escaped (outlet.name), joined by /."""
    return "/".join(outlet.name(part) for part in place)


def size(most: int) -> str:
    """A bound in words."""
    return f"{most >> 20} MiB" if most >= 1 << 20 else f"{most >> 10} KiB"


class Walk:
    """One upload's walk: what it has used of its bounds, every file it found, and what it left out and why."""

    def __init__(self, bounds: Bounds):
        self.bounds, self.bytes, self.entries = bounds, 0, 0
        self.names: list[Parts] = []  # every regular file, archives included, in the order found
        self.left_out: dict[
            Parts, str
        ] = {}  # links, special files, members that would leave their folder: why

    def entry(self) -> None:
        self.entries += 1
        if self.entries > self.bounds.entries:
            raise Refused(f"it holds more than {self.bounds.entries:,} files and folders")

    def count(self, read: int) -> None:
        self.bytes += read
        if self.bytes > self.bounds.upload:
            raise Refused(
                f"it holds more than {size(self.bounds.upload)} (unpacked), the most an upload may"
            )

    def read(self, stream: IO[bytes], most: int, place: Parts) -> bytes:
        """The whole file, refused past `most` bytes or past the upload's, counted as read."""
        data = bytearray()
        try:
            while chunk := stream.read(min(CHUNK, most + 1 - len(data))):
                self.count(len(chunk))
                data += chunk
                if len(data) > most:
                    raise Refused(f"{shown(place)} is larger than {size(most)}")
        except UNPACKING:
            raise Refused(
                f"{shown(place)} cannot be unpacked (a damaged or encrypted archive)"
            ) from None
        return bytes(data)

    def copy(self, stream: IO[bytes], out: IO[bytes], place: Parts) -> None:
        """Copy the whole file to out, counted as read, refused past the upload's bytes."""
        try:
            while chunk := stream.read(CHUNK):
                self.count(len(chunk))
                out.write(chunk)
        except UNPACKING:
            raise Refused(
                f"{shown(place)} cannot be unpacked (a damaged or encrypted archive)"
            ) from None

    def files(self, path: Path, at: Parts = ()) -> Iterator[tuple[Parts, IO[bytes], bool]]:
        """(place, stream, from an archive) for every regular file of path: a folder's files below `at`, a file as `at`
        itself, or, with `at` empty, a zip's members. Each zip met is unpacked in its place: NAME.zip's members as NAME/."""
        try:
            info = os.lstat(path)
        except OSError as error:
            raise Refused(
                f"{outlet.name(os.fsencode(path.name))} cannot be read ({error.strerror})"
            ) from None
        name = outlet.name(os.fsencode(path.name))
        if stat.S_ISLNK(info.st_mode):
            raise Refused(
                f"{name} is a link, which is not followed: give the folder or file itself"
            )
        if stat.S_ISDIR(info.st_mode):
            yield from self._folder(Folder.top(path), at)
        elif stat.S_ISREG(info.st_mode) and (at or is_zip(os.fsencode(path.name))):
            with open_regular(None, path) as stream:
                yield from self._file(
                    at or (os.fsencode(path.name),), stream, 0, unpack_at=None if at else ()
                )
        else:
            raise Refused(f"{name} is neither a folder nor a zip archive")

    def _folder(self, folder: "Folder", at: Parts) -> Iterator[tuple[Parts, IO[bytes], bool]]:
        with folder:
            for name, kind in folder.listing(self):
                place = at + (name,)
                if len(place) > self.bounds.depth:
                    raise Refused(f"its folders are nested more than {self.bounds.depth} deep")
                if kind == "dir" and name not in SKIPPED:
                    try:
                        inner = folder.folder(name)
                    except NotRegular as why:
                        self.left_out[place] = str(why)
                        continue
                    yield from self._folder(inner, place)
                elif kind == "file":
                    try:
                        stream = folder.open(name)
                    except NotRegular as why:
                        self.left_out[place] = str(why)
                        continue
                    with stream:
                        yield from self._file(place, stream, 0)
                elif kind != "dir":
                    self.left_out[place] = "a link" if kind == "link" else "not a regular file"

    def _file(
        self, place: Parts, stream: IO[bytes], nesting: int, unpack_at: Parts | None = None
    ) -> Iterator[tuple[Parts, IO[bytes], bool]]:
        """A regular file: handed over as it is, or, a zip, unpacked (at unpack_at, else beside it as NAME/)."""
        self.names.append(place)
        if not is_zip(place[-1]):
            yield place, stream, nesting > 0
            return
        if nesting >= self.bounds.nesting:
            raise Refused(
                f"{shown(place)} is an archive inside {nesting} others, more than an upload may nest"
            )
        # a member: read whole, bounded
        archive = (
            stream if nesting == 0 else io.BytesIO(self.read(stream, self.bounds.upload, place))
        )
        at = place[:-1] + (place[-1][:-4],) if unpack_at is None else unpack_at
        yield from self._archive(archive, place, at, nesting + 1)

    def _archive(
        self, file: IO[bytes], place: Parts, at: Parts, nesting: int
    ) -> Iterator[tuple[Parts, IO[bytes], bool]]:
        try:
            directory(file, self.bounds)
            archive = zipfile.ZipFile(file)
        except Refused as refused:
            raise Refused(f"{shown(place)}: {refused}") from None
        except (*UNPACKING, UnicodeDecodeError):
            self.left_out[place] = "a zip archive that cannot be read (damaged, or not a zip)"
            return
        with archive:
            for info in archive.infolist():
                self.entry()
                inner = member_parts(info)
                if inner is None:
                    self.left_out[at + (raw_name(info),)] = "a name that would leave its folder"
                    continue
                member = at + inner
                if len(member) > self.bounds.depth:
                    raise Refused(f"its folders are nested more than {self.bounds.depth} deep")
                if info.is_dir() or SKIPPED.intersection(inner[:-1]) or inner[-1] in SKIPPED:
                    continue
                kind = stat.S_IFMT(info.external_attr >> 16)
                if kind and kind != stat.S_IFREG:
                    self.left_out[member] = (
                        "a link" if kind == stat.S_IFLNK else "not a regular file"
                    )
                    continue
                try:
                    stream = archive.open(info)
                except UNPACKING:
                    self.left_out[member] = (
                        "a member that cannot be unpacked (damaged or encrypted)"
                    )
                    continue
                with stream:
                    yield from self._file(member, stream, nesting)


class NotRegular(Exception):
    """A name in a folder that is not what it was listed as, or not a regular file or folder (the message says what)."""


class Folder:
    """A folder opened without following a link: by its descriptor (POSIX), or by its path where folders cannot be opened (Windows)."""

    def __init__(self, path: bytes, fd: int | None):
        self.path, self.fd = path, fd

    @classmethod
    def top(cls, path: Path) -> "Folder":
        raw = os.fsencode(path)
        try:
            return cls(raw, os.open(raw, _FOLDER) if _BY_DESCRIPTOR else None)
        except OSError as error:
            raise Refused(
                f"{outlet.name(os.fsencode(path.name))} cannot be read ({error.strerror})"
            ) from None

    def listing(self, walk: Walk) -> list[tuple[bytes, str]]:
        """Each entry's name and kind (dir, file, link, other), in order of their bytes, each counted against the bounds."""
        found = []
        with os.scandir(self.fd if self.fd is not None else self.path) as entries:
            for entry in entries:
                walk.entry()
                found.append((os.fsencode(entry.name), _kind(entry)))
        return sorted(found)

    def folder(self, name: bytes) -> "Folder":
        if self.fd is None:
            path = os.path.join(self.path, name)
            if os.path.islink(path) or getattr(os.path, "isjunction", lambda _: False)(path):
                raise NotRegular("a link")
            return Folder(path, None)
        try:
            return Folder(os.path.join(self.path, name), os.open(name, _FOLDER, dir_fd=self.fd))
        except OSError as error:
            raise NotRegular(
                "a link"
                if error.errno in (errno.ELOOP, errno.ENOTDIR)
                else f"a folder that cannot be read ({error.strerror})"
            ) from None

    def open(self, name: bytes) -> IO[bytes]:
        return open_regular(self.fd, name if self.fd is not None else os.path.join(self.path, name))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)


def open_regular(folder_fd: int | None, name) -> IO[bytes]:
    """A regular file opened for reading without following a link, judged by what was opened (fstat)."""
    try:
        fd = (
            os.open(name, _READ, dir_fd=folder_fd)
            if folder_fd is not None
            else os.open(name, _READ)
        )
    except OSError as error:
        raise NotRegular(
            "a link"
            if error.errno == errno.ELOOP
            else f"a file that cannot be read ({error.strerror})"
        ) from None
    stream: IO[bytes] = os.fdopen(fd, "rb")
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (
        not _NOFOLLOW and not os.path.samestat(opened, os.lstat(name))
    ):
        stream.close()
        raise NotRegular("not a regular file")
    return stream


def _kind(entry: os.DirEntry) -> str:
    if entry.is_symlink() or getattr(entry, "is_junction", lambda: False)():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    return "file" if entry.is_file(follow_symlinks=False) else "other"


def is_zip(name: bytes) -> bool:
    return name.lower().endswith(b".zip") and len(name) > 4


def raw_name(info: zipfile.ZipInfo) -> bytes:
    """A member's name as the bytes in the archive (UTF-8 when the archive says so, else CP437, as zip defines)."""
    return info.orig_filename.encode(
        "utf-8" if info.flag_bits & 0x800 else "cp437", "surrogateescape"
    )


def member_parts(info: zipfile.ZipInfo) -> Parts | None:
    """A member's place below its archive's folder, or None for a name that would leave it (.., absolute, a drive, NUL)."""
    raw = raw_name(info)
    parts = tuple(part for part in re.split(rb"[/\\]", raw) if part not in (b"", b"."))
    if (
        not parts
        or b".." in parts
        or b"\0" in raw
        or raw[:1] in (b"/", b"\\")
        or re.match(rb"[A-Za-z]:", raw)
    ):
        return None
    return parts


def directory(file: IO[bytes], bounds: Bounds) -> None:
    """Refuse a zip whose list of members passes the bounds, from its end record, before zipfile reads that list."""
    end = file.seek(0, os.SEEK_END)
    tail = min(end, 22 + 0xFFFF)  # the end record, and a comment of at most 64 KiB after it
    file.seek(end - tail)
    data = file.read(tail)
    at = data.rfind(b"PK\x05\x06")
    if at < 0 or len(data) - at < 22:
        raise zipfile.BadZipFile("no end record")
    count, size = struct.unpack("<HL", data[at + 10 : at + 16])
    if count == 0xFFFF or size == 0xFFFFFFFF or count > bounds.entries or size > bounds.directory:
        raise Refused(
            f"an archive of more than {bounds.entries:,} members or a list of them past {size(bounds.directory)}"
        )
    file.seek(0)


def listing(walk: "Walk", most: int = 20) -> str:
    """The upload's files (and what was left out), as places inside it, at most this many."""
    places = sorted({*walk.names, *walk.left_out})
    if not places:
        return "no files at all"
    more = f" and {len(places) - most} more" if len(places) > most else ""
    said = [
        shown(p) + (f" ({walk.left_out[p]}, left out)" if p in walk.left_out else "")
        for p in places[:most]
    ]
    return ", ".join(said) + more
