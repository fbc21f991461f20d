"""For the kit's tests: a command on a pseudo-terminal of its own (POSIX), as a person at a terminal runs it."""

import os
import select
import subprocess
import time


def _own() -> None:
    """In the child: make the pseudo-terminal its controlling terminal, so Ctrl-C there is SIGINT to it."""
    import fcntl
    import termios

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """A command on a pseudo-terminal of its own: what it wrote so far, and keys typed into it."""

    def __init__(self, argv, cwd, env: dict | None = None):
        import pty

        self.main, secondary = pty.openpty()
        env = {**os.environ, "TERM": "dumb", "PYTHONBREAKPOINT": "", "NO_COLOR": "1", **(env or {})}
        self.process = subprocess.Popen(
            argv,
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            cwd=cwd,
            env=env,
            close_fds=True,
            start_new_session=True,
            preexec_fn=_own,
        )
        os.close(secondary)
        self.seen = ""

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """Read until text appears; all that was read."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never came; the terminal shows:\n{self.seen}"
            if select.select([self.main], [], [], min(left, 1.0))[0]:
                try:
                    self.seen += os.read(self.main, 4096).decode("utf-8", "replace")
                except OSError:  # the other end closed: the command is done
                    assert text in self.seen, (
                        f"{text!r} never came; the terminal shows:\n{self.seen}"
                    )
        return self.seen

    def type(self, keys: str):
        """Type keys, as a person would (b"\\x03" is Ctrl-C)."""
        os.write(self.main, keys.encode())

    def close(self, timeout: float = 60.0) -> int:
        """Wait for the command to end; its exit status."""
        code = self.process.wait(timeout=timeout)
        os.close(self.main)
        return code
