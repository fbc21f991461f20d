"""The one intake of submissions: every route turns an upload into a submission here, by the rules below.

The routes: `grader batch DIR ...` (a folder, a zip, an LMS download's folders and files), an LMS
download through `nbgrader zip_collect` (grader/course/collect.py unpacks it with unpack()),
nbgrader's submitted/ (autograde reads the modules with nbgrader_modules()), a Gradescope upload
(/autograder/submission) and a notebook (nbgrader's reader of a submitted .ipynb, notebook()).

1. Who: the student is named by the route's own top level only (the folder or file given to batch,
   nbgrader's submitted/STUDENT, Gradescope's metadata; Moodle's `Full Name_12345_assignsubmission_file_`
   and Canvas's `name_12345_67890_file` give a name and an id), never by a name found inside the
   upload. All the top level gives one student is one upload, however it was packed since: NAME.zip
   unpacks to the folder NAME/, so a zip and the folder it was unpacked to by hand are one upload.
2. Links: none is followed, file or folder, at any depth, in a folder or in an archive. A folder is
   opened without following a link (O_NOFOLLOW) and read through the descriptor opened.
3. Regular files only: a link, a fifo, a device or a socket is left out, and said.
4. Bounds (Bounds below), checked before anything is read whole: a module's bytes, an upload's bytes
   read or unpacked, its files and folders, folder depth, archive nesting, the list of an archive's
   members, a notebook's bytes and cells. Past one, the upload is refused, naming the bound; nothing
   past it is read.
5. Names are kept as the bytes they are and shown through grader.outlet.name; an archive member whose
   name would leave its folder (.., an absolute path, a drive) is left out.
6. One submission per upload, always: one that cannot be graded carries the reason, for its row.
"""

import errno
import hashlib
import io
import json
import os
import re
import shutil
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from grader import outlet
from grader.paths import MODULES

Parts = tuple[bytes, ...]  # a place in an upload: its folders' and its own name, as bytes

MODULE_FILES = tuple(f"{name}.py" for name in MODULES)
_MODULE_OF = {name.encode(): name for name in MODULE_FILES}
SKIPPED = frozenset({b"__MACOSX", b"__pycache__", b".grader", b".git", b".hypothesis", b".ipynb_checkpoints"})  # never a student's work
NOT_UNPACKED = b"attention-by-hand-not-unpacked.txt"  # unpack() leaves it where an upload was refused, saying why
CHUNK = 1 << 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_BY_DESCRIPTOR = os.scandir in os.supports_fd and os.open in os.supports_dir_fd  # POSIX; Windows goes by path
_UNPACKING = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError)  # damaged, encrypted
UPLOAD = (
    "Upload your five files (" + ", ".join(MODULE_FILES) + ") directly, or your exercises/ folder holding them, "
    "and nothing else that holds copies of them."
)
# The top level's names: nbgrader's COURSE/submitted/STUDENT/ASSIGNMENT, Moodle's folders, Canvas's files.
NBGRADER = (b"submitted", b"autograded")
MOODLE = re.compile(rb"(?P<name>.+)_(?P<id>\d+)_assign(?:submission|feedback)_\w*")
CANVAS = re.compile(rb"(?P<name>[^_/]+)_(?:late_)?(?P<id>\d+)_(?P<attachment>\d+)_(?P<file>.+)", re.IGNORECASE)


@dataclass(frozen=True)
class Bounds:
    """What one upload may hold; past any of these it is refused before more is read."""

    module: int = 1 << 20  # one module's bytes (the reference's largest is 6 KiB)
    upload: int = 32 << 20  # bytes read or unpacked for one upload, its archives' members included
    entries: int = 10_000  # files, folders and archive members of one upload
    depth: int = 16  # folders below the upload's top
    nesting: int = 3  # archives within archives
    directory: int = 1 << 20  # the list of an archive's members, read before any member (1 MiB: about 20,000 members)
    notebook: int = 8 << 20  # a notebook's bytes (the kit's: 20 KiB; with plots, a few MiB)
    cells: int = 1_000  # a notebook's cells (the kit's: 17)


BOUNDS = Bounds()
DOWNLOAD = Bounds(entries=100_000, directory=8 << 20)  # an LMS download as a whole: a class's uploads, each within BOUNDS


class Refused(Exception):
    """An upload the intake will not take; the message says why, in words for the student."""


def shown(place: Parts) -> str:
    """A place in an upload as the student sees it: each name escaped (outlet.name), joined by /."""
    return "/".join(outlet.name(part) for part in place)


def _size(most: int) -> str:
    return f"{most >> 20} MiB" if most >= 1 << 20 else f"{most >> 10} KiB"


class Walk:
    """One upload's walk: what it has used of its bounds, every file it found, and what it left out and why."""

    def __init__(self, bounds: Bounds = BOUNDS):
        self.bounds, self.bytes, self.entries = bounds, 0, 0
        self.names: list[Parts] = []  # every regular file, archives included, in the order found
        self.left_out: dict[Parts, str] = {}  # links, special files, members that would leave their folder: why

    def entry(self) -> None:
        self.entries += 1
        if self.entries > self.bounds.entries:
            raise Refused(f"it holds more than {self.bounds.entries:,} files and folders")

    def count(self, read: int) -> None:
        self.bytes += read
        if self.bytes > self.bounds.upload:
            raise Refused(f"it holds more than {_size(self.bounds.upload)} (unpacked), the most an upload may")

    def read(self, stream: IO[bytes], most: int, place: Parts) -> bytes:
        """The whole file, refused past `most` bytes or past the upload's, counted as read."""
        data = bytearray()
        try:
            while chunk := stream.read(min(CHUNK, most + 1 - len(data))):
                self.count(len(chunk))
                data += chunk
                if len(data) > most:
                    raise Refused(f"{shown(place)} is larger than {_size(most)}")
        except _UNPACKING:
            raise Refused(f"{shown(place)} cannot be unpacked (a damaged or encrypted archive)") from None
        return bytes(data)

    def copy(self, stream: IO[bytes], out: IO[bytes], place: Parts) -> None:
        """Copy the whole file to out, counted as read, refused past the upload's bytes."""
        try:
            while chunk := stream.read(CHUNK):
                self.count(len(chunk))
                out.write(chunk)
        except _UNPACKING:
            raise Refused(f"{shown(place)} cannot be unpacked (a damaged or encrypted archive)") from None

    def files(self, path: Path, at: Parts = ()) -> Iterator[tuple[Parts, IO[bytes], bool]]:
        """(place, stream, from an archive) for every regular file of path: a folder's files below `at`, a file as `at`
        itself, or, with `at` empty, a zip's members. Each zip met is unpacked in its place: NAME.zip's members as NAME/."""
        try:
            info = os.lstat(path)
        except OSError as error:
            raise Refused(f"{outlet.name(os.fsencode(path.name))} cannot be read ({error.strerror})") from None
        name = outlet.name(os.fsencode(path.name))
        if stat.S_ISLNK(info.st_mode):
            raise Refused(f"{name} is a link, which is not followed: give the folder or file itself")
        if stat.S_ISDIR(info.st_mode):
            yield from self._folder(_Folder.top(path), at)
        elif stat.S_ISREG(info.st_mode) and (at or _is_zip(os.fsencode(path.name))):
            with _open(None, path) as stream:
                yield from self._file(at or (os.fsencode(path.name),), stream, 0, unpack_at=None if at else ())
        else:
            raise Refused(f"{name} is neither a folder nor a zip archive")

    def _folder(self, folder: "_Folder", at: Parts) -> Iterator[tuple[Parts, IO[bytes], bool]]:
        with folder:
            for name, kind in folder.listing(self):
                place = at + (name,)
                if len(place) > self.bounds.depth:
                    raise Refused(f"its folders are nested more than {self.bounds.depth} deep")
                if kind == "dir" and name not in SKIPPED:
                    try:
                        inner = folder.folder(name)
                    except _NotRegular as why:
                        self.left_out[place] = str(why)
                        continue
                    yield from self._folder(inner, place)
                elif kind == "file":
                    try:
                        stream = folder.open(name)
                    except _NotRegular as why:
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
        if not _is_zip(place[-1]):
            yield place, stream, nesting > 0
            return
        if nesting >= self.bounds.nesting:
            raise Refused(f"{shown(place)} is an archive inside {nesting} others, more than an upload may nest")
        archive = stream if nesting == 0 else io.BytesIO(self.read(stream, self.bounds.upload, place))  # a member: read whole, bounded
        at = place[:-1] + (place[-1][:-4],) if unpack_at is None else unpack_at
        yield from self._archive(archive, place, at, nesting + 1)

    def _archive(self, file: IO[bytes], place: Parts, at: Parts, nesting: int) -> Iterator[tuple[Parts, IO[bytes], bool]]:
        try:
            directory(file, self.bounds)
            archive = zipfile.ZipFile(file)
        except Refused as refused:
            raise Refused(f"{shown(place)}: {refused}") from None
        except (*_UNPACKING, UnicodeDecodeError):
            self.left_out[place] = "a zip archive that cannot be read (damaged, or not a zip)"
            return
        with archive:
            for info in archive.infolist():
                self.entry()
                inner = member_parts(info)
                if inner is None:
                    self.left_out[at + (_raw_name(info),)] = "a name that would leave its folder"
                    continue
                member = at + inner
                if len(member) > self.bounds.depth:
                    raise Refused(f"its folders are nested more than {self.bounds.depth} deep")
                if info.is_dir() or SKIPPED.intersection(inner[:-1]) or inner[-1] in SKIPPED:
                    continue
                kind = stat.S_IFMT(info.external_attr >> 16)
                if kind and kind != stat.S_IFREG:
                    self.left_out[member] = "a link" if kind == stat.S_IFLNK else "not a regular file"
                    continue
                try:
                    stream = archive.open(info)
                except _UNPACKING:
                    self.left_out[member] = "a member that cannot be unpacked (damaged or encrypted)"
                    continue
                with stream:
                    yield from self._file(member, stream, nesting)


class _NotRegular(Exception):
    """A name in a folder that is not what it was listed as, or not a regular file or folder (the message says what)."""


class _Folder:
    """A folder opened without following a link: by its descriptor (POSIX), or by its path where folders cannot be opened (Windows)."""

    def __init__(self, path: bytes, fd: int | None):
        self.path, self.fd = path, fd

    @classmethod
    def top(cls, path: Path) -> "_Folder":
        raw = os.fsencode(path)
        try:
            return cls(raw, os.open(raw, _FOLDER) if _BY_DESCRIPTOR else None)
        except OSError as error:
            raise Refused(f"{outlet.name(os.fsencode(path.name))} cannot be read ({error.strerror})") from None

    def listing(self, walk: Walk) -> list[tuple[bytes, str]]:
        """Each entry's name and kind (dir, file, link, other), in order of their bytes, each counted against the bounds."""
        found = []
        with os.scandir(self.fd if self.fd is not None else self.path) as entries:
            for entry in entries:
                walk.entry()
                found.append((os.fsencode(entry.name), _kind(entry)))
        return sorted(found)

    def folder(self, name: bytes) -> "_Folder":
        if self.fd is None:
            path = os.path.join(self.path, name)
            if os.path.islink(path) or getattr(os.path, "isjunction", lambda _: False)(path):
                raise _NotRegular("a link")
            return _Folder(path, None)
        try:
            return _Folder(os.path.join(self.path, name), os.open(name, _FOLDER, dir_fd=self.fd))
        except OSError as error:
            raise _NotRegular(
                "a link" if error.errno in (errno.ELOOP, errno.ENOTDIR) else f"a folder that cannot be read ({error.strerror})"
            ) from None

    def open(self, name: bytes) -> IO[bytes]:
        return _open(self.fd, name if self.fd is not None else os.path.join(self.path, name))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)


def _open(folder_fd: int | None, name) -> IO[bytes]:
    """A regular file opened for reading without following a link, judged by what was opened (fstat)."""
    try:
        fd = os.open(name, _READ, dir_fd=folder_fd) if folder_fd is not None else os.open(name, _READ)
    except OSError as error:
        raise _NotRegular("a link" if error.errno == errno.ELOOP else f"a file that cannot be read ({error.strerror})") from None
    stream: IO[bytes] = os.fdopen(fd, "rb")
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (not _NOFOLLOW and not os.path.samestat(opened, os.lstat(name))):
        stream.close()
        raise _NotRegular("not a regular file")
    return stream


def _kind(entry: os.DirEntry) -> str:
    if entry.is_symlink() or getattr(entry, "is_junction", lambda: False)():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    return "file" if entry.is_file(follow_symlinks=False) else "other"


def _is_zip(name: bytes) -> bool:
    return name.lower().endswith(b".zip") and len(name) > 4


def _raw_name(info: zipfile.ZipInfo) -> bytes:
    """A member's name as the bytes in the archive (UTF-8 when the archive says so, else CP437, as zip defines)."""
    return info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437", "surrogateescape")


def member_parts(info: zipfile.ZipInfo) -> Parts | None:
    """A member's place below its archive's folder, or None for a name that would leave it (.., absolute, a drive, NUL)."""
    raw = _raw_name(info)
    parts = tuple(part for part in re.split(rb"[/\\]", raw) if part not in (b"", b"."))
    if not parts or b".." in parts or b"\0" in raw or raw[:1] in (b"/", b"\\") or re.match(rb"[A-Za-z]:", raw):
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
        raise Refused(f"an archive of more than {bounds.entries:,} members or a list of them past {_size(bounds.directory)}")
    file.seek(0)


@dataclass(frozen=True)
class Source:
    """One path an upload is made of: a folder (its files below `at`), a zip (its members below `at`), or a file placed as `at`."""

    path: Path
    at: Parts = ()


@dataclass(frozen=True)
class Upload:
    """What a route gives for one student: its paths, and who it is, as the route's top level names them."""

    key: str  # the row's key: the top level's name for the student, escaped (outlet.name); one to one
    sources: tuple[Source, ...]
    student_id: str = ""
    student_name: str = ""


@dataclass
class Submission:
    """An upload as the intake took it: the five modules and where they lay, or why it cannot be graded."""

    upload: Upload
    modules: dict[str, bytes] = field(default_factory=dict)  # "scores.py" -> bytes: all five, or none
    where: str = ""  # the folder that held them, as the student sees the upload
    problem: str = ""  # why it cannot be graded, for the student; "" when it can

    def hashes(self) -> dict[str, str]:
        """Each module's sha256, by its file name."""
        return {name: hashlib.sha256(data).hexdigest() for name, data in self.modules.items()}


def uploads(paths: Iterable[Path]) -> list[Upload]:
    """The uploads a batch's paths make, in the order first given: one per student, as each path's own name says.

    A path keeps its own name (a link is not resolved; the walk refuses it). In one folder, `ada/` and `ada.zip` are
    ada's one upload, and Canvas's files of one student are one upload; nbgrader's submitted/ada/ASSIGNMENT is ada's.
    Names given from two folders that would be alike are told apart by their folders' names (a/ada, b/ada), so that
    every folder has its row; the same paths give the same keys on every run and machine.
    """
    grouped: dict[tuple[Path, bytes], tuple[tuple[str, str], list[Source]]] = {}
    for given in paths:
        path = Path(os.path.abspath(given))
        top, name, at, who = _top(path)
        sources = grouped.setdefault((top, name), (who, []))[1]
        if Source(path, at) not in sources:
            sources.append(Source(path, at))
    keys = _apart([top for top, _ in grouped], [name for _, name in grouped])
    return [Upload(outlet.name(key), tuple(sources), *who) for key, (who, sources) in zip(keys, grouped.values())]


def _apart(tops: list[Path], names: list[bytes]) -> list[bytes]:
    """Each name, with as many of its top level's folders before it as tell it apart from the same name elsewhere."""
    keys, depth = list(names), 0
    while len(set(keys)) < len(keys) and depth < max(len(top.parts) for top in tops):
        depth += 1
        shared = {key for key in keys if keys.count(key) > 1}
        keys = [
            b"/".join([*map(os.fsencode, top.parts[-depth:]), name]) if key in shared or depth > 1 and b"/" in key else key
            for key, top, name in zip(keys, tops, names)
        ]
    return keys


def _top(path: Path) -> tuple[Path, bytes, Parts, tuple[str, str]]:
    """A path's top level (the folder its student's name is in), that name, where its content goes, and (id, name)."""
    raw = os.fsencode(path.name)
    base = path.parent if raw == b"exercises" else path
    if os.fsencode(base.parent.parent.name) in NBGRADER:  # nbgrader's COURSE/submitted/STUDENT/ASSIGNMENT[/exercises]
        student = os.fsencode(base.parent.name)
        return base.parent.parent, student, (), (outlet.name(student), "")
    is_file = os.path.isfile(path) and not os.path.islink(path)
    if is_file and (canvas := CANVAS.fullmatch(raw)):  # one of Canvas's files: NAME_ID_ATTACHMENT_FILE
        key = canvas["name"] + b"_" + canvas["id"]
        return path.parent, key, (canvas["file"],), (outlet.name(canvas["id"]), outlet.name(canvas["name"]))
    key = raw[:-4] if is_file and _is_zip(raw) else os.fsencode(base.name)
    if moodle := MOODLE.fullmatch(key):  # Moodle's folder: Full Name_ID_assignsubmission_file_
        return base.parent, key, (), (outlet.name(moodle["id"]), outlet.name(moodle["name"]))
    return base.parent, key, (), ("", "")


def take(upload: Upload, bounds: Bounds = BOUNDS) -> Submission:
    """The upload as a submission: its five modules and the folder that held them, or why it cannot be graded."""
    walk, found, differ, loose = Walk(bounds), dict[Parts, bytes](), set[Parts](), set[Parts]()
    try:
        for source in upload.sources:
            for place, stream, unpacked in walk.files(source.path, source.at):
                if place[-1] in _MODULE_OF and not SKIPPED.intersection(place[:-1]):
                    data = walk.read(stream, bounds.module, place)
                    if found.setdefault(place, data) != data:
                        differ.add(place)
                    loose.update([] if unpacked else [place[:-1]])
    except Refused as refused:
        return Submission(upload, problem=f"Your upload was not graded: {refused}. {UPLOAD}")
    except OSError as error:  # a folder that went away while it was read, a disk that failed
        return Submission(upload, problem=f"Your upload could not be read ({error.strerror}): ask your instructor to grade it again.")
    return locate(upload, walk, found, differ, loose)


def locate(upload: Upload, walk: Walk, found: dict[Parts, bytes], differ: set[Parts], loose: Iterable[Parts] = ()) -> Submission:
    """The one folder of the upload that holds the five modules, or what to tell the student.

    A folder of a zip's that holds the very bytes of the one folder outside any zip is that zip unpacked by hand: one copy.
    """
    if differ:
        places = ", ".join(shown(each) for each in sorted(differ))
        return Submission(upload, problem=f"Your upload holds two different files as {places} (a zip and a folder beside it?). {UPLOAD}")
    holders: dict[Parts, dict[str, bytes]] = {}
    for found_at, data in sorted(found.items(), key=lambda item: (len(item[0]), item[0])):  # the shallowest folder first
        holders.setdefault(found_at[:-1], {})[_MODULE_OF[found_at[-1]]] = data
    complete = [folder for folder, modules in holders.items() if len(modules) == len(MODULE_FILES)]
    outside = [folder for folder in complete if folder in loose]
    if len(outside) == 1 and all(holders[folder] == holders[outside[0]] for folder in complete):
        complete = outside
    if len(complete) == 1:
        modules = holders[complete[0]]
        return Submission(upload, {name: modules[name] for name in MODULE_FILES}, where=place(complete[0]))
    if complete:
        places = "; ".join(place(folder) for folder in complete)
        return Submission(upload, problem=f"Your submission holds the five modules in {len(complete)} places: {places}. {UPLOAD}")
    for left, why in walk.left_out.items():
        if left[-1] in _MODULE_OF and (left[:-1] in holders or not holders):
            return Submission(upload, problem=f"{shown(left[-1:])} in your submission is {why}: upload the file itself. {UPLOAD}")
    if not holders:
        return Submission(upload, problem=f"No module of the exercise is in your submission. It holds: {listing(walk)}. {UPLOAD}")
    lines = ["Your submission does not hold all five modules in one folder."]
    for folder, modules in holders.items():
        missing = ", ".join(name for name in MODULE_FILES if name not in modules)
        lines.append(f"In {place(folder)}: {', '.join(sorted(modules))}; missing {missing}.")
    return Submission(upload, problem="\n".join(lines + [UPLOAD]))


def place(folder: Parts) -> str:
    """Where a folder is, as the student sees their upload."""
    return f"{shown(folder)}/" if folder else "the top of your submission"


def listing(walk: Walk, most: int = 20) -> str:
    """The upload's files (and what was left out), as places inside it, at most this many."""
    places = sorted({*walk.names, *walk.left_out})
    if not places:
        return "no files at all"
    more = f" and {len(places) - most} more" if len(places) > most else ""
    said = [shown(p) + (f" ({walk.left_out[p]}, left out)" if p in walk.left_out else "") for p in places[:most]]
    return ", ".join(said) + more


def gradescope(root: Path, bounds: Bounds = BOUNDS) -> Upload:
    """Gradescope's upload: ROOT/submission, its student from ROOT/submission_metadata.json where Gradescope wrote one."""
    ids, names = [], []
    try:
        with _open(None, root / "submission_metadata.json") as stream:
            users = json.loads(stream.read(bounds.module)).get("users", [])  # Gradescope's own file: bounded all the same
        for user in users if isinstance(users, list) else []:
            ids.append(str(user.get("sid") or user.get("id") or ""))
            names.append(str(user.get("name", "")))
    except (_NotRegular, OSError, ValueError, AttributeError):
        pass
    student = " + ".join(outlet.terminal(i) for i in ids if i)
    return Upload("submission", (Source(root / "submission"),), student, " + ".join(outlet.terminal(n) for n in names if n))


def nbgrader_modules(folder: Path, bounds: Bounds = BOUNDS) -> dict[str, bytes]:
    """The five modules of nbgrader's submitted/STUDENT/ASSIGNMENT/exercises/, as its layout fixes them.

    Refused unless the student's folder, the assignment's and exercises/ are folders (no link) and each
    module a regular file within its bound.
    """
    try:
        student = _Folder.top(folder.parent)
    except Refused:
        raise Refused("the submission's folder cannot be read") from None
    opened = [student]
    try:
        for name in (folder.name, "exercises"):
            try:
                opened.append(opened[-1].folder(os.fsencode(name)))
            except _NotRegular:
                raise Refused("there is no folder exercises/ in the submission (a link is not one)") from None
        return {name.removesuffix(".py"): _module(opened[-1], name, bounds) for name in MODULE_FILES}
    finally:
        for each in opened:
            each.__exit__()


def _module(folder: _Folder, name: str, bounds: Bounds) -> bytes:
    try:
        stream = folder.open(name.encode())
    except _NotRegular as why:
        said = "is missing, or is a link, which is not graded" if "regular" not in str(why) else "is not a regular file"
        raise Refused(f"exercises/{name} {said}") from None
    with stream:
        return Walk(bounds).read(stream, bounds.module, (b"exercises", name.encode()))


def check_module(folder: Path, name: str, bounds: Bounds = BOUNDS) -> None:
    """Refuse folder/NAME.py unless it is a regular file within a module's bound, by a look (lstat) that reads nothing."""
    path = Path(folder) / f"{name}.py"
    try:
        info = os.lstat(path)
    except OSError as error:
        raise Refused(f"{path.name} cannot be read ({error.strerror}): check that it exists and that you may read it") from None
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{path.name} is a symbolic link: the grader grades regular files only, so replace the link with the file itself")
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"{path.name} is not a regular file")
    if info.st_size > bounds.module:
        raise Refused(f"{path.name} is larger than {_size(bounds.module)}, more than a module of the exercise can be")


def notebook(stream, bounds: Bounds = BOUNDS) -> str:
    """A submitted notebook's text (a text or binary stream), refused past its bytes or its cells before nbformat reads it."""
    text = stream.read(bounds.notebook + 1)
    if len(text) > bounds.notebook:
        raise Refused(f"it is larger than {_size(bounds.notebook)}")
    text = text.decode("utf-8") if isinstance(text, bytes) else text
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise Refused("it is nested too deep to be a notebook") from None
    if isinstance(parsed, dict):
        cells = parsed.get("cells") or [
            c for sheet in parsed.get("worksheets") or [] if isinstance(sheet, dict) for c in sheet.get("cells", [])
        ]
        if isinstance(cells, list) and len(cells) > bounds.cells:
            raise Refused(f"it has {len(cells):,} cells, more than the {bounds.cells:,} a notebook may have")
    return text


def unpack(download: Path, target: Path, bounds: Bounds = BOUNDS, whole: Bounds = DOWNLOAD) -> dict[bytes, str]:
    """Unpack an LMS download (a zip, a folder of uploads, or one upload's file) into target, each top-level entry
    one upload within bounds.

    A zip's members go to target/ZIPNAME/ (as nbgrader's extractor puts them), a folder's to target/FOLDER/, a
    file to target/; each zip inside an upload is unpacked beside it as NAME/. An upload refused is removed whole
    and a note NOT_UNPACKED left in its place, saying why. Returns the refused uploads by their top name, with why.
    """
    raw, refused, walks, folders = os.fsencode(download.name), dict[bytes, str](), dict[bytes, Walk](), set[bytes]()
    info = os.lstat(download)
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{outlet.name(raw)} is a link, which is not followed")
    packed = stat.S_ISREG(info.st_mode) and _is_zip(raw)
    if packed:  # an LMS download: its members first, each counted against its own upload
        root = target / os.fsdecode(raw[:-4])
        with _open(None, download) as file:
            _unpack_tops(file, root, bounds, whole, walks, refused, folders)
        tops, source_of = sorted(walks), lambda top: root / os.fsdecode(top)
    elif stat.S_ISDIR(info.st_mode):  # a download unpacked already: each entry an upload
        root, tops = target / os.fsdecode(raw), _tops(download, whole)
        source_of = lambda top: download / os.fsdecode(top)  # noqa: E731
    else:  # one upload's file, as Canvas's downloads hold them
        root, tops, source_of = target, [raw], lambda top: download
    for top in tops:
        if top in refused:
            continue
        walk = Walk(bounds)
        walk.bytes = walks[top].bytes if top in walks else 0  # what its members took in the download, counted once
        if not os.path.lexists(source_of(top)):  # none of its members was a file that could be unpacked
            refused[top] = f"it held no file that could be unpacked: {listing(walks[top])}"
            continue
        folders.update([top] if os.path.isdir(source_of(top)) else [])
        try:
            for place, stream, unpacked in walk.files(source_of(top), (top,)):
                if unpacked or not packed:  # a download's own members are written already
                    _write(root, place, stream, walk)
        except Refused as error:
            refused[top] = str(error)
    for top, why in refused.items():
        _refuse(root, top, why, top in folders)
    return refused


def _tops(folder: Path, whole: Bounds) -> list[bytes]:
    """A download folder's top-level entries, bounded."""
    names = []
    with os.scandir(folder) as entries:
        for entry in entries:
            names.append(os.fsencode(entry.name))
            if len(names) > whole.entries:
                raise Refused(f"the download holds more than {whole.entries:,} uploads")
    return names


def _unpack_tops(file: IO[bytes], root: Path, bounds: Bounds, whole: Bounds, walks: dict, refused: dict, folders: set) -> None:
    """A zip download's members written below root, each counted against its own upload's bounds (its first folder's)."""
    directory(file, whole)
    with zipfile.ZipFile(file) as archive:
        for info in archive.infolist():
            parts = member_parts(info)
            folders.update(parts[:1] if parts and (len(parts) > 1 or info.is_dir()) else [])
            if parts is None:
                raw = re.split(rb"[/\\]", _raw_name(info).lstrip(b"/\\"), maxsplit=1)
                walks.setdefault(raw[0], Walk(bounds)).left_out[tuple(raw)] = "a name that would leave its folder"
                folders.update(raw[:1] if len(raw) > 1 else [])
                continue
            if parts[0] in refused or info.is_dir():
                continue
            walk = walks.setdefault(parts[0], Walk(bounds))
            try:
                walk.entry()
                kind = stat.S_IFMT(info.external_attr >> 16)
                if len(parts) > bounds.depth:
                    raise Refused(f"its folders are nested more than {bounds.depth} deep")
                if kind and kind != stat.S_IFREG:
                    walk.left_out[parts] = "a link" if kind == stat.S_IFLNK else "not a regular file"
                if SKIPPED.intersection(parts) or (kind and kind != stat.S_IFREG):
                    continue
                with archive.open(info) as stream:
                    _write(root, parts, stream, walk)
            except Refused as why:
                refused[parts[0]] = str(why)
            except _UNPACKING:
                refused[parts[0]] = f"{shown(parts)} cannot be unpacked (a damaged or encrypted archive)"


def _write(root: Path, place: Parts, stream: IO[bytes], walk: Walk) -> None:
    """A file of an upload written at root/place, new (never over a link or a file already there)."""
    path = os.path.join(os.fsencode(root), *place)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0), 0o644)
    except (OSError, ValueError):  # the same place twice (a zip beside the folder it unpacks to: the first kept), or a name
        walk.left_out.setdefault(place, "a name written already, or one this file system cannot hold")  # the disk cannot hold
        return
    with os.fdopen(fd, "wb") as out:
        walk.copy(stream, out, place)


def _refuse(root: Path, top: bytes, why: str, folder: bool) -> None:
    """Remove a refused upload's files and leave a note saying why: in its folder, or beside its file."""
    path = os.path.join(os.fsencode(root), top)
    if _is_zip(top):  # a zip at the top (Canvas's files): what it unpacked to, beside it
        shutil.rmtree(path[:-4], ignore_errors=True)
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
        os.unlink(path)
    shutil.rmtree(path, ignore_errors=True)
    if folder:
        os.makedirs(path, exist_ok=True)
    note = os.path.join(path, NOT_UNPACKED) if folder else path + b"-" + NOT_UNPACKED
    with open(note, "w", encoding="utf-8") as out:
        out.write(f"{why}\n")  # why the upload was not unpacked, for the collector to tell the student
