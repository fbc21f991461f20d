"""The kits a benchmark runs: the student's, as `grader release` writes it, for the commands a student runs."""

import subprocess
import sys
import tempfile
from pathlib import Path


def student_kit() -> Path:
    """The student's kit in a temporary folder (public checks; each exercise built on the student's own earlier ones).

    Run `python -m grader ...` with this folder as the working directory: Python puts it first on sys.path.
    """
    kit = Path(tempfile.mkdtemp(prefix="bench-kit-")) / "kit"
    subprocess.run(
        [sys.executable, "-m", "grader", "release", str(kit)], check=True, capture_output=True
    )
    return kit
