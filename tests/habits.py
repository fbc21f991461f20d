"""The house's habits as commands: ruff's lint and format, and mypy's errors per file against a baseline that may only go down.

`python tests/habits.py` writes the baseline anew from mypy's findings (after fixing errors, to lower it).
"""

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(__file__).resolve().parent / "mypy_baseline.json"
ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+(?::\d+)?: error: ")


def run(*args: str) -> subprocess.CompletedProcess:
    """A tool of the test extra, run on the kit by this Python."""
    return subprocess.run([sys.executable, "-m", *args], cwd=KIT_ROOT, capture_output=True, text=True, timeout=600)


def mypy_errors(cache: Path) -> tuple[Counter, str]:
    """mypy's errors on grader/ counted per file, and its whole output."""
    done = run("mypy", "--cache-dir", str(cache), "--no-error-summary")
    found = Counter(m["file"] for line in done.stdout.splitlines() if (m := ERROR.match(line)))
    return found, done.stdout


def baseline() -> dict[str, int]:
    """The accepted mypy errors per file."""
    return json.loads(BASELINE.read_text(encoding="utf-8"))


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        counts, _ = mypy_errors(Path(cache))
    BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n", encoding="utf-8")
    print(f"{BASELINE.name}: {sum(counts.values())} errors in {len(counts)} files")
