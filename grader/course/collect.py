"""`nbgrader zip_collect` for the kit: a student's files are found wherever their upload put them, and every file left out is said."""

from pathlib import Path, PurePosixPath

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin

ARCHIVES = {".zip", ".gz"}  # unpacked by nbgrader's extractor before collecting, each into a folder beside it


class KitCollector(FileNameCollectorPlugin):
    """nbgrader's collector, with file_id taken from exercises/ on (or the notebook's name) wherever the file lies."""

    # A student who uploaded a zip of their folder has their files under folders of the zip's own,
    # STUDENT_..._/attention-by-hand/attention-by-hand/exercises/scores.py: nbgrader alone would file
    # them there, find no notebook, and leave the student out.

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.taken: dict[tuple[str, str], str] = {}  # (student, file_id) -> the file collected for it

    def collect(self, submitted_file: str):
        suffix = Path(submitted_file).suffix
        if suffix not in self.valid_ext:
            if suffix not in ARCHIVES:
                self.log.warning(
                    "Not collected: %s (only %s files are; zip archives are unpacked)", submitted_file, ", ".join(self.valid_ext)
                )
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


def file_id(found: str) -> str:
    """exercises/NAME.py from the last exercises/ folder of the path, a notebook's bare name, or the path as it was."""
    parts = PurePosixPath(found.replace("\\", "/")).parts
    if "exercises" in parts[:-1]:
        last = len(parts) - 1 - parts[::-1].index("exercises")
        return "/".join(parts[last:])
    if parts and parts[-1].endswith(".ipynb"):
        return parts[-1]
    return found
