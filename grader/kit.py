"""Which kit this is: the full kit (the repository, with the reference and the hidden checks) or the student's.

`grader release` writes the student's kit with KIND = "student"; everything that says which checks
ran, or whether an instructor command is here, asks this module.
"""

KIND = "full"  # "full": the repository; "student": a kit written by `grader release`
DISTRIBUTION = "attention-by-hand"  # the name pip knows this kit by


def is_student_kit() -> bool:
    """True in the student's kit: public checks only, no reference, no instructor commands."""
    return KIND == "student"


def checks_run() -> str:
    """Which checks `grader check` runs here, as the check JSON says it: "public" or "all"."""
    return "public" if is_student_kit() else "all"
