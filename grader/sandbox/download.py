"""An LMS download unpacked to disk upload by upload, each within its bounds, for nbgrader's zip_collect (grader/course/nbgrader/collect.py).

Called through grader/sandbox/intake.py (intake.unpack), which sets the bounds.
"""

import os
import re
import shutil
import stat
import zipfile
from pathlib import Path
from typing import IO

from grader import outlet
from grader.sandbox.walk import (
    SKIPPED,
    UNPACKING,
    Bounds,
    Parts,
    Refused,
    Walk,
    directory,
    is_zip,
    listing,
    member_parts,
    open_regular,
    raw_name,
    shown,
)

NOT_UNPACKED = b"attention-by-hand-not-unpacked.txt"  # left where an upload was refused, saying why
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def unpack(download: Path, target: Path, bounds: Bounds, whole: Bounds) -> dict[bytes, str]:
    """Unpack an LMS download (a zip, a folder of uploads, or one upload's file) into target, each top-level entry
    one upload within bounds.

    A zip's members go to target/ZIPNAME/ (as nbgrader's extractor puts them), a folder's to target/FOLDER/, a
    file to target/; each zip inside an upload is unpacked beside it as NAME/. An upload refused is removed whole
    and a note NOT_UNPACKED left in its place, saying why. Returns the refused uploads by their top name, with why.
    """
    raw, refused, walks, folders = (
        os.fsencode(download.name),
        dict[bytes, str](),
        dict[bytes, Walk](),
        set[bytes](),
    )
    info = os.lstat(download)
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{outlet.name(raw)} is a link, which is not followed")
    packed = stat.S_ISREG(info.st_mode) and is_zip(raw)
    if packed:  # an LMS download: its members first, each counted against its own upload
        root = target / os.fsdecode(raw[:-4])
        with open_regular(None, download) as file:
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
        # what its members took in the download, counted once
        walk.bytes = walks[top].bytes if top in walks else 0
        if not os.path.lexists(
            source_of(top)
        ):  # none of its members was a file that could be unpacked
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


def _unpack_tops(
    file: IO[bytes],
    root: Path,
    bounds: Bounds,
    whole: Bounds,
    walks: dict,
    refused: dict,
    folders: set,
) -> None:
    """A zip download's members written below root, each counted against its own upload's bounds (its first folder's)."""
    directory(file, whole)
    with zipfile.ZipFile(file) as archive:
        for info in archive.infolist():
            parts = member_parts(info)
            folders.update(parts[:1] if parts and (len(parts) > 1 or info.is_dir()) else [])
            if parts is None:
                raw = re.split(rb"[/\\]", raw_name(info).lstrip(b"/\\"), maxsplit=1)
                walks.setdefault(raw[0], Walk(bounds)).left_out[tuple(raw)] = (
                    "a name that would leave its folder"
                )
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
                    walk.left_out[parts] = (
                        "a link" if kind == stat.S_IFLNK else "not a regular file"
                    )
                if SKIPPED.intersection(parts) or (kind and kind != stat.S_IFREG):
                    continue
                with archive.open(info) as stream:
                    _write(root, parts, stream, walk)
            except Refused as why:
                refused[parts[0]] = str(why)
            except UNPACKING:
                refused[parts[0]] = (
                    f"{shown(parts)} cannot be unpacked (a damaged or encrypted archive)"
                )


def _write(root: Path, place: Parts, stream: IO[bytes], walk: Walk) -> None:
    """A file of an upload written at root/place, new (never over a link or a file already there)."""
    path = os.path.join(os.fsencode(root), *place)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(
            path,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0),
            0o644,
        )
    except (
        OSError,
        ValueError,
    ):  # the same place twice (a zip beside the folder it unpacks to: the first kept), or a name
        # the disk cannot hold
        walk.left_out.setdefault(
            place, "a name written already, or one this file system cannot hold"
        )
        return
    with os.fdopen(fd, "wb") as out:
        walk.copy(stream, out, place)


def _refuse(root: Path, top: bytes, why: str, folder: bool) -> None:
    """Remove a refused upload's files and leave a note saying why: in its folder, or beside its file."""
    path = os.path.join(os.fsencode(root), top)
    if is_zip(top):  # a zip at the top (Canvas's files): what it unpacked to, beside it
        shutil.rmtree(path[:-4], ignore_errors=True)
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
        os.unlink(path)
    shutil.rmtree(path, ignore_errors=True)
    if folder:
        os.makedirs(path, exist_ok=True)
    note = os.path.join(path, NOT_UNPACKED) if folder else path + b"-" + NOT_UNPACKED
    with open(note, "w", encoding="utf-8") as out:
        # why the upload was not unpacked, for the collector to tell the student
        out.write(f"{why}\n")
