"""For the kit's tests: fresh virtual environments that reuse this one's packages, offline."""

import os
import site
import subprocess
import sys
from pathlib import Path

BIN = "Scripts" if os.name == "nt" else "bin"


def fresh_venv(folder: Path) -> Path:
    """A venv without pip that sees this venv's packages (numpy, click, ...) but not the full kit's editable install.

    A .pth line puts the parent's site-packages on sys.path without running its .pth files, so the
    full kit's editable finder never loads there. The parent's pip installs into it, offline.
    """
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120
    )
    python = folder / BIN / ("python.exe" if os.name == "nt" else "python")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "parent-packages.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    return folder


def pip_install(venv: Path, *what: str) -> None:
    """pip install into the venv with the parent's pip: no dependencies, no build isolation, so no download."""
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    command = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        *what,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
