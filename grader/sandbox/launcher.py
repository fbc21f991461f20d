"""The one door through which the kit starts a child Python: its flags, environment, token, session, deadline and end.

Every child carries a token, as TOKEN_VAR and as RUN_VAR (which the workers it starts are given too);
`end` kills the child's whole tree, then anything still carrying the token, so nothing it started outlives
it. A child either has a session of its own (Ctrl-C in the terminal never reaches it: the parent ends
it) or, for the student's own `grader try`, is attached to the terminal as a script they run would be.
"""

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from grader.sandbox.tree import RUN_VAR, TOKEN_VAR, end_tree, kill_marked, new_session

PYTHON = sys.executable
UTF8 = ("-X", "utf8")  # the same text encoding on every OS
ISOLATED = ("-I",)  # no PYTHON* variable, no user site, no current folder on sys.path
# nor site-packages nor bytecode written: for code that sets sys.path itself
BARE = ("-I", "-S", "-B")
# a worker's: it sets sys.path itself, to its own code and the site folders
WORKER_FLAGS = (*BARE, *UTF8)
DEVNULL = subprocess.DEVNULL  # for a process another library starts (jupyter_client's kernel)
OUTPUT_KEPT = 1 << 20  # bytes of a child's output kept, from its end
KIT_MODULE = "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"


def python(*args: str, flags: tuple = ISOLATED) -> list[str]:
    """The command line of the kit's Python with these flags (UTF-8 always) and arguments."""
    return [PYTHON, *flags, *UTF8, *args]


def module(name: str, *args: str, root: Path | None = None) -> list[str]:
    """`python -I -m NAME ARGS`; with root, that folder first on sys.path (a kit run from its checkout)."""
    if root is None:
        return python("-m", name, *args)
    return python("-c", KIT_MODULE, str(root), name, *args)


def own_exercises(folder: Path) -> bool:
    """Whether a folder is the student's own exercises/ (the kit's, or ./exercises of a copy), where code may run unconfined."""
    from grader.paths import EXERCISES_DIR, default_submission

    return Path(folder).resolve() in (EXERCISES_DIR.resolve(), default_submission().resolve())


def interpreter() -> str:
    """The path of the kit's Python, for messages that show it (never to start it: use Child)."""
    return PYTHON


def piped(
    argv: list[str], *, env: dict, cwd=None, stderr: bool = True, **popen
) -> subprocess.Popen:
    """A child whose stdin and stdout are unbuffered pipes to this process (the worker's and the reference helper's frames).

    stderr: a pipe too (the student's output), else discarded. The caller ends it: a worker as its
    confinement says (grader.sandbox.isolation), the helper by killing it.
    """
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr else subprocess.DEVNULL,
        bufsize=0,
        env=env,
        cwd=cwd,
        **popen,
    )


@contextlib.contextmanager
def ctrl_c_held(undo=None):
    """Ctrl-C pressed meanwhile takes effect once the block is done, after `undo()` if given (what the block made,
    which its caller will never get): a child is never left half started or half ended, running on or its temporary
    folder on disk. Only the main thread receives signals; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list = []
    previous = signal.signal(signal.SIGINT, lambda *args: pressed.append(args))
    try:
        yield
        if pressed and undo is not None:
            undo()
    finally:
        signal.signal(signal.SIGINT, previous)
        if pressed and callable(previous):
            previous(*pressed[0])
        elif pressed and previous == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)


class Child:
    """One child process, started in a session of its own (or attached to the terminal) and ended with all it started.

    output: "merge" keeps stdout and stderr in one file, "events" pipes stdout (lines for the parent)
    and keeps stderr, "frames" pipes stdin and stdout unbuffered (frames both ways) and keeps stderr,
    "discard" keeps stderr only, "terminal" leaves all three to the terminal.
    feed: stdin is a pipe, for one line (send), instead of nothing.
    scratch: its temporary files go into a folder of its own, removed when it ends: a grader process
    killed mid-run (a watch's check cut short by a save, or done once its verdict is saved) leaves no
    snapshot and no worker's room behind. Only for a child that runs on this machine's own folders.
    """

    def __init__(
        self,
        argv: list[str],
        *,
        env: dict | None = None,
        cwd=None,
        output: str = "merge",
        feed: bool = False,
        scratch: bool = False,
        **popen,
    ):
        with ctrl_c_held(undo=self.end):
            self._start(argv, env, cwd, output, feed, scratch, popen)

    def _start(self, argv, env, cwd, output, feed, scratch, popen) -> None:
        self.token, self.started = secrets.token_hex(8), time.time()
        env = dict(os.environ if env is None else env)
        # the run is passed on to the workers it starts
        env.update({TOKEN_VAR: self.token, RUN_VAR: self.token})
        self.scratch = Path(tempfile.mkdtemp(prefix="grader-child-")) if scratch else None
        if self.scratch is not None:
            # as the folders made in it: a worker's user passes through to its room
            os.chmod(self.scratch, 0o711)
            env.update(dict.fromkeys(("TMPDIR", "TEMP", "TMP"), str(self.scratch)))
        self.kept = None if output == "terminal" else tempfile.TemporaryFile()
        pipes: dict[str, Any] = {
            "merge": {
                "stdin": subprocess.DEVNULL,
                "stdout": self.kept,
                "stderr": subprocess.STDOUT,
            },
            "events": {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": self.kept},
            "frames": {
                "stdin": subprocess.PIPE,
                "stdout": subprocess.PIPE,
                "stderr": self.kept,
                "bufsize": 0,
            },
            "discard": {
                "stdin": subprocess.DEVNULL,
                "stdout": subprocess.DEVNULL,
                "stderr": self.kept,
            },
            "terminal": {},
        }[output]
        if feed:
            pipes["stdin"] = subprocess.PIPE
        session = {} if output == "terminal" else new_session()
        try:
            self.process = subprocess.Popen(argv, env=env, cwd=cwd, **pipes, **session, **popen)
        except BaseException:
            if self.scratch is not None:
                shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        self.pid, self.ended = self.process.pid, False

    def wait(self, seconds: float | None = None) -> bool:
        """Wait for the child to end, at most `seconds` (None: as long as it takes); whether it ended."""
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def send(self, line: str) -> None:
        """Write one line to the child's stdin (feed=True) and close it; nothing when it has ended."""
        if self.process.stdin is None:
            return
        try:
            self.process.stdin.write(line.encode("utf-8") + b"\n")
            self.process.stdin.close()
        except (OSError, ValueError):
            pass

    @property
    def returncode(self) -> int | None:
        """Its exit status (negative: the signal that ended it), None while it runs."""
        return self.process.poll()

    def output(self, limit: int = OUTPUT_KEPT) -> str:
        """The last `limit` bytes of what it wrote (stderr, and stdout when merged), as text."""
        if self.kept is None or self.kept.closed:
            return ""
        self.kept.seek(0, os.SEEK_END)
        size = self.kept.tell()
        self.kept.seek(max(0, size - limit))
        text = self.kept.read().decode("utf-8", errors="replace")
        return (f"... ({size - limit} bytes of output not shown)\n" if size > limit else "") + text

    def end(self) -> None:
        """Kill its whole tree, then every process still carrying its token (once), and close its pipe."""
        if self.ended:
            return
        with ctrl_c_held():
            self._end()

    def _end(self) -> None:
        self.ended = True
        end_tree(self.process)
        kill_marked(f"{TOKEN_VAR}={self.token}", self.started)
        kill_marked(f"{RUN_VAR}={self.token}", self.started)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def close(self) -> None:
        """End it and drop its kept output."""
        self.end()
        if self.kept is not None:
            self.kept.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def run(argv: list[str], seconds: float | None = None, **options) -> tuple[int | None, str]:
    """Run a child to its end or its deadline, then end all it left: (exit status or None past the deadline, its output)."""
    with Child(argv, **options) as child:
        finished = child.wait(seconds)
        child.end()
        return (child.returncode if finished else None), child.output()
