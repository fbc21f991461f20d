"""A loop that catches KeyboardInterrupt, SystemExit and every other exception, and ignores SIGTERM."""

import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)


def softmax(x):
    while True:
        try:
            time.sleep(0.01)
        except BaseException:
            pass
