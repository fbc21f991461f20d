"""Wall-clock bounds for a shared machine: a bound stated for an idle one, stretched by how busy the cores are now.

Limits on student code count CPU time (grader.sandbox.clock), so on a busy machine a call may take
longer on the clock and still be within them; a test's own bound on the clock must allow for that.
"""

import os

import psutil


def allowed(seconds: float) -> float:
    """The seconds a bound of `seconds` on an idle machine allows now: times the load per core, when that is over 1."""
    return seconds * max(1.0, psutil.getloadavg()[0] / (os.cpu_count() or 1))
