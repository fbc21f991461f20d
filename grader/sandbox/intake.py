"""The one intake of submissions: every route turns an upload into a submission here, by the rules below.

The routes: `grader batch DIR ...` (a folder, a zip, an LMS download's folders and files), an LMS
download through `nbgrader zip_collect` (grader/course/nbgrader/collect.py unpacks it with unpack()),
nbgrader's submitted/ (autograde reads the modules with nbgrader_modules()), a Gradescope upload
(/autograder/submission) and a notebook (nbgrader's reader of a submitted .ipynb, notebook()).

1. Who: the student is named by the route's own top level only (the folder or file given to batch,
   nbgrader's submitted/STUDENT, Gradescope's metadata; Moodle's `Full Name_12345_assignsubmission_file_`
   and Canvas's `name_12345_67890_file` give a name and an id), never by a name found inside the
   upload. All the top level gives one student is one upload, however it was packed since: NAME.zip
   unpacks to the folder NAME/, so a zip and the folder it was unpacked to by hand are one upload.
2. Links: none is followed, file or folder, at any depth, in a folder or in an archive. A folder is
   opened without following a link (O_NOFOLLOW) and read through the descriptor opened
   (grader/sandbox/walk.py reads an upload so; grader/sandbox/download.py unpacks an LMS download so).
3. Regular files only: a link, a fifo, a device or a socket is left out, and said.
4. Bounds (BOUNDS below), checked before anything is read whole: a module's bytes, an upload's bytes
   read or unpacked, its files and folders, folder depth, archive nesting, the list of an archive's
   members, a notebook's bytes and cells. Past one, the upload is refused, naming the bound; nothing
   past it is read.
5. Names are kept as the bytes they are and shown through grader.outlet.name; an archive member whose
   name would leave its folder (.., an absolute path, a drive) is left out.
6. One submission per upload, always: one that cannot be graded carries the reason, for its row.
"""

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader import outlet
from grader.paths import MODULES
from grader.sandbox import download as lms

# the note an upload refused leaves, for the collector
from grader.sandbox.download import NOT_UNPACKED as NOT_UNPACKED
from grader.sandbox.walk import (
    SKIPPED,
    Bounds,
    Folder,
    NotRegular,
    Parts,
    Refused,
    Walk,
    is_zip,
    listing,
    open_regular,
    shown,
    size,
)

# of the mechanics, what the routes name too
__all__ = ["NOT_UNPACKED", "Bounds", "Refused", "shown"]

MODULE_FILES = tuple(f"{name}.py" for name in MODULES)
_MODULE_OF = {name.encode(): name for name in MODULE_FILES}
UPLOAD = (
    "Upload your five files ("
    + ", ".join(MODULE_FILES)
    + ") directly, or your exercises/ folder holding them, "
    "and nothing else that holds copies of them."
)
# The top level's names: nbgrader's COURSE/submitted/STUDENT/ASSIGNMENT, Moodle's folders, Canvas's files.
NBGRADER = (b"submitted", b"autograded")
MOODLE = re.compile(rb"(?P<name>.+)_(?P<id>\d+)_assign(?:submission|feedback)_\w*")
CANVAS = re.compile(
    rb"(?P<name>[^_/]+)_(?:late_)?(?P<id>\d+)_(?P<attachment>\d+)_(?P<file>.+)", re.IGNORECASE
)
# Canvas numbers a file resubmitted under the same name: scores.py, then scores-1.py, scores-2.py
RESUBMITTED = re.compile(rb"(?P<stem>[^/]+)-\d+\.py")


BOUNDS = Bounds(
    module=1 << 20,  # one module's bytes (the reference's largest is 6 KiB)
    upload=32 << 20,  # bytes read or unpacked for one upload, its archives' members included
    entries=10_000,  # files, folders and archive members of one upload
    depth=16,  # folders below the upload's top
    nesting=3,  # archives within archives
    directory=1
    << 20,  # the list of an archive's members, read before any member (1 MiB: about 20,000 members)
    notebook=8 << 20,  # a notebook's bytes (the kit's: 20 KiB; with plots, a few MiB)
    cells=1_000,  # a notebook's cells (the kit's: 17)
)
# an LMS download as a whole: a class's uploads, each within BOUNDS
DOWNLOAD = replace(BOUNDS, entries=100_000, directory=8 << 20)


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
    # "scores.py" -> bytes: all five, or none
    modules: dict[str, bytes] = field(default_factory=dict)
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
    return [
        Upload(outlet.name(key), tuple(sources), *who)
        for key, (who, sources) in zip(keys, grouped.values())
    ]


def _apart(tops: list[Path], names: list[bytes]) -> list[bytes]:
    """Each name, with as many of its top level's folders before it as tell it apart from the same name elsewhere."""
    keys, depth = list(names), 0
    while len(set(keys)) < len(keys) and depth < max(len(top.parts) for top in tops):
        depth += 1
        shared = {key for key in keys if keys.count(key) > 1}
        keys = [
            b"/".join([*map(os.fsencode, top.parts[-depth:]), name])
            if key in shared or depth > 1 and b"/" in key
            else key
            for key, top, name in zip(keys, tops, names)
        ]
    return keys


def _top(path: Path) -> tuple[Path, bytes, Parts, tuple[str, str]]:
    """A path's top level (the folder its student's name is in), that name, where its content goes, and (id, name)."""
    raw = os.fsencode(path.name)
    base = path.parent if raw == b"exercises" else path
    if (
        os.fsencode(base.parent.parent.name) in NBGRADER
    ):  # nbgrader's COURSE/submitted/STUDENT/ASSIGNMENT[/exercises]
        student = os.fsencode(base.parent.name)
        return base.parent.parent, student, (), (outlet.name(student), "")
    is_file = os.path.isfile(path) and not os.path.islink(path)
    if is_file and (
        canvas := CANVAS.fullmatch(raw)
    ):  # one of Canvas's files: NAME_ID_ATTACHMENT_FILE
        key = canvas["name"] + b"_" + canvas["id"]
        return (
            path.parent,
            key,
            (module_named(canvas["file"]),),
            (outlet.name(canvas["id"]), outlet.name(canvas["name"])),
        )
    key = raw[:-4] if is_file and is_zip(raw) else os.fsencode(base.name)
    if moodle := MOODLE.fullmatch(key):  # Moodle's folder: Full Name_ID_assignsubmission_file_
        return base.parent, key, (), (outlet.name(moodle["id"]), outlet.name(moodle["name"]))
    return base.parent, key, (), ("", "")


def module_named(file: bytes) -> bytes:
    """A Canvas file's name as the student gave it: `scores-1.py`, a resubmitted scores.py, is scores.py again."""
    again = RESUBMITTED.fullmatch(file)
    return again["stem"] + b".py" if again and again["stem"] + b".py" in _MODULE_OF else file


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
        return Submission(
            upload,
            problem=f"Your upload could not be read ({error.strerror}): ask your instructor to grade it again.",
        )
    return locate(upload, walk, found, differ, loose)


def locate(
    upload: Upload,
    walk: Walk,
    found: dict[Parts, bytes],
    differ: set[Parts],
    loose: Iterable[Parts] = (),
) -> Submission:
    """The one folder of the upload that holds the five modules, or what to tell the student.

    A folder of a zip's that holds the very bytes of the one folder outside any zip is that zip unpacked by hand: one copy.
    """
    if differ:
        places = ", ".join(shown(each) for each in sorted(differ))
        return Submission(
            upload,
            problem=f"Your upload holds two different files as {places} (a zip and a folder beside it?). {UPLOAD}",
        )
    holders: dict[Parts, dict[str, bytes]] = {}
    for found_at, data in sorted(
        found.items(), key=lambda item: (len(item[0]), item[0])
    ):  # the shallowest folder first
        holders.setdefault(found_at[:-1], {})[_MODULE_OF[found_at[-1]]] = data
    complete = [folder for folder, modules in holders.items() if len(modules) == len(MODULE_FILES)]
    outside = [folder for folder in complete if folder in loose]
    if len(outside) == 1 and all(holders[folder] == holders[outside[0]] for folder in complete):
        complete = outside
    if len(complete) == 1:
        modules = holders[complete[0]]
        return Submission(
            upload, {name: modules[name] for name in MODULE_FILES}, where=place(complete[0])
        )
    if complete:
        places = "; ".join(place(folder) for folder in complete)
        return Submission(
            upload,
            problem=f"Your submission holds the five modules in {len(complete)} places: {places}. {UPLOAD}",
        )
    for left, why in walk.left_out.items():
        if left[-1] in _MODULE_OF and (left[:-1] in holders or not holders):
            return Submission(
                upload,
                problem=f"{shown(left[-1:])} in your submission is {why}: upload the file itself. {UPLOAD}",
            )
    if not holders:
        return Submission(
            upload,
            problem=f"No module of the exercise is in your submission. It holds: {listing(walk)}. {UPLOAD}",
        )
    lines = ["Your submission does not hold all five modules in one folder."]
    for folder, modules in holders.items():
        missing = ", ".join(name for name in MODULE_FILES if name not in modules)
        lines.append(f"In {place(folder)}: {', '.join(sorted(modules))}; missing {missing}.")
    return Submission(upload, problem="\n".join(lines + [UPLOAD]))


def place(folder: Parts) -> str:
    """Where a folder is, as the student sees their upload."""
    return f"{shown(folder)}/" if folder else "the top of your submission"


def gradescope(root: Path, bounds: Bounds = BOUNDS) -> Upload:
    """Gradescope's upload: ROOT/submission, its student from ROOT/submission_metadata.json where Gradescope wrote one."""
    ids, names = [], []
    try:
        with open_regular(None, root / "submission_metadata.json") as stream:
            # Gradescope's own file: bounded all the same
            users = json.loads(stream.read(bounds.module)).get("users", [])
        for user in users if isinstance(users, list) else []:
            ids.append(str(user.get("sid") or user.get("id") or ""))
            names.append(str(user.get("name", "")))
    except (NotRegular, OSError, ValueError, AttributeError):
        pass
    student = " + ".join(outlet.terminal(i) for i in ids if i)
    return Upload(
        "submission",
        (Source(root / "submission"),),
        student,
        " + ".join(outlet.terminal(n) for n in names if n),
    )


def nbgrader_modules(folder: Path, bounds: Bounds = BOUNDS) -> dict[str, bytes]:
    """The five modules of nbgrader's submitted/STUDENT/ASSIGNMENT/exercises/, as its layout fixes them.

    Refused unless the student's folder, the assignment's and exercises/ are folders (no link) and each
    module a regular file within its bound.
    """
    try:
        student = Folder.top(folder.parent)
    except Refused:
        raise Refused("the submission's folder cannot be read") from None
    opened = [student]
    try:
        for name in (folder.name, "exercises"):
            try:
                opened.append(opened[-1].folder(os.fsencode(name)))
            except NotRegular:
                raise Refused(
                    "there is no folder exercises/ in the submission (a link is not one)"
                ) from None
        return {
            name.removesuffix(".py"): _module(opened[-1], name, bounds) for name in MODULE_FILES
        }
    finally:
        for each in opened:
            each.__exit__()


def _module(folder: Folder, name: str, bounds: Bounds) -> bytes:
    try:
        stream = folder.open(name.encode())
    except NotRegular as why:
        said = (
            "is missing, or is a link, which is not graded"
            if "regular" not in str(why)
            else "is not a regular file"
        )
        raise Refused(f"exercises/{name} {said}") from None
    with stream:
        return Walk(bounds).read(stream, bounds.module, (b"exercises", name.encode()))


def check_module(folder: Path, name: str, bounds: Bounds = BOUNDS) -> None:
    """Refuse folder/NAME.py unless it is a regular file within a module's bound, by a look (lstat) that reads nothing."""
    path = Path(folder) / f"{name}.py"
    try:
        info = os.lstat(path)
    except OSError as error:
        raise Refused(
            f"{path.name} cannot be read ({error.strerror}): check that it exists and that you may read it"
        ) from None
    if stat.S_ISLNK(info.st_mode):
        raise Refused(
            f"{path.name} is a symbolic link: the grader grades regular files only, so replace the link with the file itself"
        )
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"{path.name} is not a regular file")
    if info.st_size > bounds.module:
        raise Refused(
            f"{path.name} is larger than {size(bounds.module)}, more than a module of the exercise can be"
        )


def notebook(stream, bounds: Bounds = BOUNDS) -> str:
    """A submitted notebook's text (a text or binary stream), refused past its bytes or its cells before nbformat reads it."""
    text = stream.read(bounds.notebook + 1)
    if len(text) > bounds.notebook:
        raise Refused(f"it is larger than {size(bounds.notebook)}")
    text = text.decode("utf-8") if isinstance(text, bytes) else text
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise Refused("it is nested too deep to be a notebook") from None
    if isinstance(parsed, dict):
        cells = parsed.get("cells") or [
            c
            for sheet in parsed.get("worksheets") or []
            if isinstance(sheet, dict)
            for c in sheet.get("cells", [])
        ]
        if isinstance(cells, list) and len(cells) > bounds.cells:
            raise Refused(
                f"it has {len(cells):,} cells, more than the {bounds.cells:,} a notebook may have"
            )
    return text


def unpack(
    download: Path, target: Path, bounds: Bounds = BOUNDS, whole: Bounds = DOWNLOAD
) -> dict[bytes, str]:
    """An LMS download unpacked into target for nbgrader's zip_collect, upload by upload (grader/sandbox/download.py);
    the uploads refused, by their top name, with why."""
    return lms.unpack(download, target, bounds, whole)
