"""The house's habits as commands: ruff's lint and format, and two baselines that may only go down, per file:
mypy's errors, and ruff's findings of functions too complex, too long or taking too many arguments.

`python tests/habits.py` writes both baselines anew (after fixing findings, to lower them).
"""

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(__file__).resolve().parent / "mypy_baseline.json"
FUNCTIONS_BASELINE = Path(__file__).resolve().parent / "functions_baseline.json"
# complexity, branches, arguments, statements: limits in pyproject.toml
FUNCTION_RULES = ("C901", "PLR0912", "PLR0913", "PLR0915")
ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+(?::\d+)?: error: ")


def run(*args: str) -> subprocess.CompletedProcess:
    """A tool of the test extra, run on the kit by this Python."""
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=KIT_ROOT, capture_output=True, text=True, timeout=600
    )


def mypy_errors(cache: Path) -> tuple[Counter, str]:
    """mypy's errors on grader/ counted per file, and its whole output."""
    done = run("mypy", "--cache-dir", str(cache), "--no-error-summary")
    found = Counter(m["file"] for line in done.stdout.splitlines() if (m := ERROR.match(line)))
    return found, done.stdout


def function_findings(*paths: str) -> tuple[Counter, str]:
    """ruff's FUNCTION_RULES findings in these paths (the kit: "."), counted per file, and their listing."""
    options = (
        "--config",
        str(KIT_ROOT / "pyproject.toml"),
        "--no-cache",
        "--exit-zero",
        "--output-format=json",
    )
    done = run("ruff", "check", *options, "--select", ",".join(FUNCTION_RULES), *paths)
    findings = json.loads(done.stdout)
    found = Counter(relative(finding["filename"]) for finding in findings)
    listing = "\n".join(
        f"{relative(f['filename'])}:{f['location']['row']}: {f['code']} {f['message']}"
        for f in findings
    )
    return found, listing


def relative(filename: str) -> str:
    """A file's path from the kit's folder, with forward slashes, on every OS (as is, outside the kit)."""
    path = Path(filename)
    return (
        path.relative_to(KIT_ROOT).as_posix() if path.is_relative_to(KIT_ROOT) else path.as_posix()
    )


def baseline(path: Path = BASELINE) -> dict[str, int]:
    """The accepted findings per file (mypy's by default)."""
    return json.loads(path.read_text(encoding="utf-8"))


def compared(found: Counter, accepted: dict[str, int]) -> tuple[dict[str, int], int]:
    """(the files with more findings than accepted, how many fewer findings there are in all than accepted)."""
    worse = {file: n for file, n in found.items() if n > accepted.get(file, 0)}
    return worse, sum(accepted.values()) - sum(found.values())


def write(path: Path, counts: Counter) -> None:
    """Write a baseline anew, saying which files it lets have more findings than before."""
    before = baseline(path) if path.exists() else {}
    rises = {
        file: f"{before.get(file, 0)} -> {n}" for file, n in compared(counts, before)[0].items()
    }
    path.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n", encoding="utf-8")
    print(
        f"{path.name}: {sum(counts.values())} findings in {len(counts)} files"
        + (f"; more than before: {rises}" if rises else "")
    )


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        write(BASELINE, mypy_errors(Path(cache))[0])
    write(FUNCTIONS_BASELINE, function_findings(".")[0])
