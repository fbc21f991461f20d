# module: softmax
"""Sends its files to a server on the machine (the test puts its port in PORT)."""

import socket

PORT = 0


def softmax(x):
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=2) as s:
            s.sendall(b"abh-attack: here are my answers")
    except OSError as error:
        raise RuntimeError(f"no network: {error}") from None
    raise RuntimeError("sent")
