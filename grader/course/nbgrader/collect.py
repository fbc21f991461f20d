"""`nbgrader zip_collect` for the kit: the LMS download unpacked by the kit's intake, each student's files filed from their own upload only.

KitExtractor unpacks the download through grader.sandbox.intake: each upload within its bounds, zips
in it unpacked beside them, no link followed, regular files only; an upload refused is replaced by a
note saying why. KitCollector files a file only as the student whose own top folder holds it: the
instructor's pattern names the student, and a file it would name as another student (a folder named
like a classmate's inside an upload) is not collected. The five modules are filed as exercises/NAME.py
whether the upload held the folder, a zip of it or the five files flat. A student whose upload has no
notebook, or nothing the kit grades, gets the kit's notebook with a note saying so, so that autograde
grades the modules (or says why there are none) and the student has a row in nbgrader's export.
"""

import logging
import os
import re
from pathlib import Path, PurePosixPath

import nbformat
from nbgrader.plugins.zipcollect import ExtractorPlugin, FileNameCollectorPlugin

from grader import outlet
from grader.course.nbgrader import notebook
from grader.paths import MODULES
from grader.sandbox import intake

# unpacked by the kit's extractor before collecting, each into a folder beside it
ARCHIVES = {".zip"}
MODULE_FILES = {f"{name}.py" for name in MODULES}
NOTE_BYTES = 4 << 10  # a note the extractor left (its own words) is at most this long
# Moodle's download, as text
MOODLE_FOLDER = re.compile(r"(?P<name>.+)_(?P<id>[^_/]+)_assign(?:submission|feedback)_\w*")


class Escaped(logging.Filter):
    """zip_collect's log as a terminal may show it: the control characters of the students' file names escaped (outlet)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = outlet.terminal(record.getMessage()), None
        return True


def escaped(log: logging.Logger) -> None:
    """Escape every line of this log from now on, nbgrader's own lines included (they name each file)."""
    if not any(isinstance(each, Escaped) for each in log.filters):
        log.addFilter(Escaped())


class KitExtractor(ExtractorPlugin):
    """nbgrader's extractor, by the kit's intake: every upload of the download unpacked within its bounds."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        escaped(self.log)

    def extract(self, archive_path: str, extracted_path: str) -> None:
        entries = sorted(os.listdir(archive_path)) if os.path.isdir(archive_path) else []
        if not entries:
            self.log.warning("No files found in directory: %s", archive_path)
            return
        for name in entries:
            try:
                refused = intake.unpack(Path(archive_path) / name, Path(extracted_path))
            except intake.Refused as error:
                self.log.error("Not unpacked: %s (%s)", outlet.name(name), error)
                continue
            for top, why in refused.items():
                self.log.warning(
                    "Not unpacked: %s of %s (%s); the student's feedback says so",
                    outlet.name(top),
                    outlet.name(name),
                    why,
                )


class KitCollector(FileNameCollectorPlugin):
    """nbgrader's collector, with file_id taken from exercises/ on (or the notebook's or a module's name) wherever the file lies."""

    # A student who uploaded a zip of their folder has their files under folders of the zip's own,
    # STUDENT_..._/attention-by-hand/attention-by-hand/exercises/scores.py: nbgrader alone would file
    # them there, find no notebook, and leave the student out.

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.taken: dict[
            tuple[str, str], str
        ] = {}  # (student, file_id) -> the file collected for it
        self.refused: dict[
            str, list[str]
        ] = {}  # student -> the names of the files of theirs not collected
        self.not_unpacked: dict[str, str] = {}  # student -> why the extractor refused their upload
        escaped(self.log)
        app = self.parent
        if app is not None and hasattr(app, "_transfer_files"):
            # nbgrader calls no plugin after copying the files: the stand-in notebooks are written then
            transfer = app._transfer_files
            app._transfer_files = lambda data: (transfer(data), self.complete(data))

    def collect(self, submitted_file: str):
        if os.fsencode(submitted_file).endswith(intake.NOT_UNPACKED):
            self.note_not_unpacked(submitted_file)
            return None
        suffix = Path(submitted_file).suffix
        if suffix not in self.valid_ext:
            if suffix not in ARCHIVES:
                self.log.warning(
                    "Not collected: %s (only %s files are; zip archives are unpacked)",
                    submitted_file,
                    ", ".join(self.valid_ext),
                )
                self.note_refused(submitted_file)
            return None
        info = super().collect(submitted_file)
        if not info:
            return info
        owner = self.owner(submitted_file)
        if owner is not None and owner != info["student_id"]:
            self.log.warning(
                "Not collected: %s, which lies in the upload of %s but is named as %s's: a file is filed only as the student "
                "whose own top folder holds it",
                outlet.name(submitted_file),
                outlet.name(owner),
                outlet.name(info["student_id"]),
            )
            self.refused.setdefault(owner, []).append(PurePosixPath(submitted_file).name)
            return None
        info["file_id"] = file_id(info["file_id"])
        key = (info["student_id"], info["file_id"])
        if key in self.taken:
            self.log.warning(
                "Not collected: %s, since %s was already collected as %s for %s",
                submitted_file,
                self.taken[key],
                info["file_id"],
                info["student_id"],
            )
            return None
        self.taken[key] = submitted_file
        return info

    def owner(self, submitted_file: str) -> str | None:
        """The student whose own top folder holds the file: the one the instructor's pattern names for its shallowest folder.

        Each folder from the top of the extracted download down is tried with the file's own name in it; the first the
        pattern gives a student for is that student's upload, whatever a folder deeper in it is named.
        """
        root = self.extracted_root()
        path = PurePosixPath(submitted_file)
        folders = [
            folder
            for folder in reversed(path.parents)
            if root is None or (folder != root and root in folder.parents)
        ]
        for folder in folders:
            match = self._quiet_match(f"{folder}/{path.name}")
            if match and match.get("student_id"):
                return match["student_id"]
        return None

    def _quiet_match(self, path: str) -> dict | None:
        """The pattern's groups for a path, without nbgrader's warning for each path that does not match."""
        match = re.match(self.named_regexp, path) if self.named_regexp else None
        return match.groupdict() if match and match.groups() else None

    def extracted_root(self) -> PurePosixPath | None:
        """The folder zip_collect collects from (its extracted_directory), where the uploads' top folders are."""
        app = self.parent
        try:
            return PurePosixPath(os.path.abspath(app._format_collect_path(app.extracted_directory)))
        except (AttributeError, TypeError):
            return None

    def note_not_unpacked(self, note: str) -> None:
        """Remember why the extractor refused a student's upload, for their stand-in notebook."""
        match = self._quiet_match(note)
        if match and match.get("student_id"):
            with open(note, encoding="utf-8", errors="replace") as text:
                self.not_unpacked[match["student_id"]] = text.read(NOTE_BYTES).strip()

    def note_refused(self, submitted_file: str) -> None:
        """Remember whose file was left out, when the instructor's pattern names its student."""
        match = self._match(submitted_file) if self.named_regexp else None
        if match and match.get("student_id"):
            self.refused.setdefault(match["student_id"], []).append(
                PurePosixPath(match.get("file_id") or submitted_file).name
            )

    def complete(self, data: dict) -> None:
        """Give every student who uploaded anything a notebook to autograde: the kit's, with a note, where theirs is missing."""
        app = self.parent
        coursedir, assignment = app.coursedir, app.coursedir.assignment_id
        released = sorted(
            Path(coursedir.format_path(coursedir.release_directory, ".", assignment)).glob(
                "*.ipynb"
            )
        )
        names = [path.name for path in released] or [f"{assignment}.ipynb"]
        for student in sorted(set(data) | set(self.refused) | set(self.not_unpacked)):
            folder = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
            folder.mkdir(parents=True, exist_ok=True)
            ids = set(data.get(student, {}).get("file_ids", []))
            for name in names:
                if name not in ids and not (folder / name).exists():
                    unpacked = student not in self.not_unpacked
                    why = (
                        what_was_uploaded(ids, self.refused.get(student, []))
                        if unpacked
                        else self.not_unpacked[student]
                    )
                    (folder / name).write_text(
                        stand_in(assignment, why, unpacked), encoding="utf-8"
                    )
                    self.log.warning(
                        "No notebook %s from %s: the kit's notebook stands in (%s)",
                        name,
                        student,
                        why,
                    )
        try:
            self.record_names(set(data) | set(self.refused) | set(self.not_unpacked))
        except Exception as error:  # the gradebook's trouble: the files are collected all the same, only the names are not kept
            self.log.warning(
                "The students' names were not written to the gradebook (%s: %s)",
                type(error).__name__,
                error,
            )

    def named(self, students: set[str]) -> dict[str, tuple[str, str]]:
        """Each student's (first, last) name as the download names their upload, in the extracted download or in its
        archive's folder there (download_name)."""
        root = self.extracted_root()
        tops = [Path(root)] if root is not None and os.path.isdir(root) else []
        # a download's own folder
        tops += [
            p for top in tops for p in sorted(top.iterdir()) if p.is_dir() and not p.is_symlink()
        ]
        names: dict[str, tuple[str, str]] = {}
        for top in tops:
            for entry in sorted(top.iterdir()):
                found = download_name(entry)
                if found and found[0] in students:
                    names.setdefault(found[0], found[1])
        return names

    def record_names(self, students: set[str]) -> None:
        """Give nbgrader's gradebook the students' names from the download, for its export and grader export; a name the
        gradebook has (the instructor's roster) is kept."""
        from nbgrader.api import Gradebook, MissingEntry

        names = self.named(students)
        if not names:
            return
        with Gradebook(self.parent.coursedir.db_url) as gradebook:
            for student, (first, last) in names.items():
                given = {"first_name": first or None, "last_name": last or None}
                try:
                    known = gradebook.find_student(student)
                except MissingEntry:
                    gradebook.add_student(student, **given)
                    continue
                if not (known.first_name or known.last_name):
                    gradebook.update_or_create_student(student, **given)


def download_name(entry: Path) -> tuple[str, tuple[str, str]] | None:
    """The student's id and (first, last) name an upload's top entry in an LMS download gives, or None.

    Moodle's folder `Full Name_ID_assignsubmission_file_` gives the name split at its last space (one word: the first
    name). Canvas's file `lastfirst_ID_ATTACHMENT_FILE` (`lastfirst_late_ID_...` when late; a zip of theirs unpacked
    to a folder of that name) gives one word, the last name then the first run together: the last name, as Canvas
    sorts by it. Names are escaped (outlet.name); a link is not read.
    """
    if entry.is_symlink():
        return None
    if entry.is_dir() and (moodle := MOODLE_FOLDER.fullmatch(entry.name)):
        first, _, last = outlet.name(moodle["name"]).rpartition(" ")
        return moodle["id"], (first or last, last if first else "")
    if canvas := intake.CANVAS.fullmatch(os.fsencode(entry.name)):
        return os.fsdecode(canvas["id"]), ("", outlet.name(canvas["name"]))
    return None


def what_was_uploaded(ids: set[str], refused: list[str]) -> str:
    """What the student's upload held, in a sentence for their feedback."""
    modules = sorted(PurePosixPath(i).name for i in ids if PurePosixPath(i).name in MODULE_FILES)
    said = f"it held {', '.join(modules)}" if modules else "it held none of the five modules"
    if refused:
        said += f", and files the kit does not grade ({', '.join(sorted(refused)[:10])})"
    return said


def stand_in(assignment: str, why: str, unpacked: bool = True) -> str:
    """The kit's notebook for a student who uploaded none (or whose upload was not unpacked), with a note on top saying so."""
    nb = nbformat.from_dict(notebook.build(assignment))
    note = (
        f"**Your upload had no notebook**: {why}. The kit's notebook stands in for it, so that your "
        "modules in exercises/ are graded as you uploaded them."
    )
    if not unpacked:
        note = f"**Your upload was not unpacked**: {why}. The kit's notebook stands in for it: nothing of yours was graded."
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(note))
    return nbformat.writes(nb) + os.linesep


def file_id(found: str) -> str:
    """exercises/NAME.py from the last exercises/ folder of the path or a module uploaded loose; a notebook's bare name, or the path."""
    parts = PurePosixPath(found.replace("\\", "/")).parts
    if "exercises" in parts[:-1]:
        last = len(parts) - 1 - parts[::-1].index("exercises")
        return "/".join(parts[last:])
    # a loose module, perhaps as Canvas numbers a resubmitted one (scores-1.py)
    module = os.fsdecode(intake.module_named(os.fsencode(parts[-1]))) if parts else ""
    if module in MODULE_FILES:
        return f"exercises/{module}"
    if parts and parts[-1].endswith(".ipynb"):
        return parts[-1]
    return found
