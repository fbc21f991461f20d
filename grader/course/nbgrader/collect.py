"""`nbgrader zip_collect` for the kit: a student's files are found wherever their upload put them, and every upload gets graded.

The five modules are filed as exercises/NAME.py whether the upload held the folder, a zip of it or
the five files flat. A student whose upload has no notebook, or nothing the kit grades, gets the
kit's notebook with a note saying so, so that autograde grades the modules (or says why there are
none) and the student has a row in nbgrader's export.
"""

import os
from pathlib import Path, PurePosixPath

import nbformat
from nbgrader.plugins.zipcollect import FileNameCollectorPlugin

from grader.course.nbgrader import notebook
from grader.paths import MODULES

ARCHIVES = {".zip", ".gz"}  # unpacked by nbgrader's extractor before collecting, each into a folder beside it
MODULE_FILES = {f"{name}.py" for name in MODULES}


class KitCollector(FileNameCollectorPlugin):
    """nbgrader's collector, with file_id taken from exercises/ on (or the notebook's or a module's name) wherever the file lies."""

    # A student who uploaded a zip of their folder has their files under folders of the zip's own,
    # STUDENT_..._/attention-by-hand/attention-by-hand/exercises/scores.py: nbgrader alone would file
    # them there, find no notebook, and leave the student out.

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.taken: dict[tuple[str, str], str] = {}  # (student, file_id) -> the file collected for it
        self.refused: dict[str, list[str]] = {}  # student -> the names of the files of theirs not collected
        app = self.parent
        if app is not None and hasattr(app, "_transfer_files"):
            # nbgrader calls no plugin after copying the files: the stand-in notebooks are written then
            transfer = app._transfer_files
            app._transfer_files = lambda data: (transfer(data), self.complete(data))

    def collect(self, submitted_file: str):
        suffix = Path(submitted_file).suffix
        if suffix not in self.valid_ext:
            if suffix not in ARCHIVES:
                self.log.warning(
                    "Not collected: %s (only %s files are; zip archives are unpacked)", submitted_file, ", ".join(self.valid_ext)
                )
                self.note_refused(submitted_file)
            return None
        info = super().collect(submitted_file)
        if not info:
            return info
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

    def note_refused(self, submitted_file: str) -> None:
        """Remember whose file was left out, when the instructor's pattern names its student."""
        match = self._match(submitted_file) if self.named_regexp else None
        if match and match.get("student_id"):
            self.refused.setdefault(match["student_id"], []).append(PurePosixPath(match.get("file_id") or submitted_file).name)

    def complete(self, data: dict) -> None:
        """Give every student who uploaded anything a notebook to autograde: the kit's, with a note, where theirs is missing."""
        app = self.parent
        coursedir, assignment = app.coursedir, app.coursedir.assignment_id
        released = sorted(Path(coursedir.format_path(coursedir.release_directory, ".", assignment)).glob("*.ipynb"))
        names = [path.name for path in released] or [f"{assignment}.ipynb"]
        for student in sorted(set(data) | set(self.refused)):
            folder = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
            folder.mkdir(parents=True, exist_ok=True)
            ids = set(data.get(student, {}).get("file_ids", []))
            for name in names:
                if name not in ids and not (folder / name).exists():
                    why = what_was_uploaded(ids, self.refused.get(student, []))
                    (folder / name).write_text(stand_in(assignment, why), encoding="utf-8")
                    self.log.warning("No notebook %s from %s: the kit's notebook stands in (%s)", name, student, why)


def what_was_uploaded(ids: set[str], refused: list[str]) -> str:
    """What the student's upload held, in a sentence for their feedback."""
    modules = sorted(PurePosixPath(i).name for i in ids if PurePosixPath(i).name in MODULE_FILES)
    said = f"it held {', '.join(modules)}" if modules else "it held none of the five modules"
    if refused:
        said += f", and files the kit does not grade ({', '.join(sorted(refused)[:10])})"
    return said


def stand_in(assignment: str, why: str) -> str:
    """The kit's notebook for a student who uploaded none, with a note on top saying so."""
    nb = nbformat.from_dict(notebook.build(assignment))
    note = (
        f"**Your upload had no notebook**: {why}. The kit's notebook stands in for it, so that your "
        "modules in exercises/ are graded as you uploaded them."
    )
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(note))
    return nbformat.writes(nb) + os.linesep


def file_id(found: str) -> str:
    """exercises/NAME.py from the last exercises/ folder of the path, a module uploaded loose, a notebook's bare name, or the path."""
    parts = PurePosixPath(found.replace("\\", "/")).parts
    if "exercises" in parts[:-1]:
        last = len(parts) - 1 - parts[::-1].index("exercises")
        return "/".join(parts[last:])
    if parts and parts[-1] in MODULE_FILES:
        return f"exercises/{parts[-1]}"
    if parts and parts[-1].endswith(".ipynb"):
        return parts[-1]
    return found
