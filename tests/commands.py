"""The kit's commands as an instructor types them, for the tests that run them as processes."""

import sys
from pathlib import Path


def batch_command(folders, csv_file: Path, python=sys.executable) -> list[str]:
    """`python -m grader batch FOLDERS --jobs 2 --csv CSV_FILE`: two at a time, as on the machine's two cores."""
    return [
        str(python),
        "-m",
        "grader",
        "batch",
        *map(str, folders),
        "--jobs",
        "2",
        "--csv",
        str(csv_file),
    ]
