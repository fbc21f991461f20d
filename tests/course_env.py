"""nbgrader's and the grader's course commands as the instructor runs them, for the tests that run a real course."""

import os
import subprocess
import sys
from pathlib import Path


def environment(home: Path) -> dict[str, str]:
    """nbgrader's environment: this venv's scripts first; home and Jupyter's folders inside the test's folder."""
    env = dict(
        os.environ,
        PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        HOME=str(home),
    )
    env.pop("PYTHONPATH", None)
    env.update(
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        JUPYTER_DATA_DIR=str(home / "data"),
        IPYTHONDIR=str(home / ".ipython"),
    )
    return env


def run(cwd: Path, env: dict | None, *args: str) -> str:
    """Run a command of the course (nbgrader or grader), failing the test if it fails; its output."""
    done = subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr
