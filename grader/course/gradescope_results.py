"""What Gradescope gets: results.json made from the check JSON (grader.sandbox.intake finds the submission's modules)."""

from grader import outlet
from grader.exercises import EXERCISES

FAULT = (
    "This is a fault of the autograder, not something to fix in your code: please report it to your "
    "instructor, who can see the details. Your submission was not graded."
)


# Gradescope's, for the hidden checks' names and messages
HIDDEN_VISIBILITIES = ("hidden", "after_due_date", "after_published")
HIDDEN_TEST = "Hidden checks: which did not pass, and why"


def graded(
    check: dict, where: str, extra: dict, seconds: float, hidden: str = "after_published"
) -> dict:
    """results.json for a finished check: one visible test per exercise, the hidden checks' failures in a test of their own, the total."""
    by_name = {exercise["name"]: exercise for exercise in check.get("exercises", [])}
    tests = [
        test(number, exercise, by_name.get(exercise.name))
        for number, exercise in enumerate(EXERCISES, 1)
    ]
    tests.append(hidden_test(by_name, hidden))
    total = float(check["total"]["points"])
    lines = [
        f"{total:g} of {sum(e.points for e in EXERCISES):g} points. Graded the five modules in {where}."
    ]
    lines += [f"{t['name']}: {t['score']:g} of {t['max_score']:g} points" for t in tests[:-1]]
    if any(t["score"] < t["max_score"] for t in tests):
        lines.append(
            "Each exercise below lists the checks that did not pass, with the smallest input that shows it."
        )
    return document(total, "\n".join(lines), tests, {**check_extra(check), **extra}, seconds)


def test(number: int, exercise, result: dict | None) -> dict:
    """One exercise as a Gradescope test: its points and, unless it passed, what did not pass."""
    name = f"{number}. {exercise.name}: {exercise.title}"
    if result is None:
        return entry(name, 0.0, exercise.points, f"This exercise was not checked. {FAULT}")
    checks = result.get("checks", [])
    passed = sum(c["status"] == "passed" for c in checks)
    if passed == len(checks):
        return entry(
            name, result["points"], result["max_points"], f"All {len(checks)} checks pass."
        )
    public = [c for c in checks if c.get("public")]
    hidden = [c for c in checks if not c.get("public")]
    said = f"{passed} of {len(checks)} checks pass."
    if any(c["status"] != "passed" for c in hidden):
        left = sum(c["status"] != "passed" for c in hidden)
        said += f' {left} of the {len(hidden)} hidden checks do not pass: see "{HIDDEN_TEST}" once your instructor shows it.'
    shown_failures = failures(public)
    return entry(
        name,
        result["points"],
        result["max_points"],
        said + (f"\n\n{shown_failures}" if shown_failures else ""),
    )


def hidden_test(by_name: dict, visibility: str) -> dict:
    """The hidden checks that did not pass, named with their messages, shown to the student as the course chose (no points)."""
    parts = []
    for exercise in EXERCISES:
        hidden = [
            c for c in by_name.get(exercise.name, {}).get("checks", []) if not c.get("public")
        ]
        if any(c["status"] != "passed" for c in hidden):
            parts.append(f"{exercise.name}:\n{failures(hidden)}")
    text = "\n\n".join(parts) or "All the hidden checks that ran pass."
    return entry(HIDDEN_TEST, 0.0, 0.0, text) | {"visibility": visibility}


def failures(checks: list[dict]) -> str:
    """The checks that did not pass, those with the same message given once."""
    groups: dict[tuple[str, str], list[str]] = {}
    for check in checks:
        if check["status"] != "passed":
            groups.setdefault((check["status"], check.get("message", "")), []).append(check["id"])
    status = {"failed": "failed", "error": "stopped with an error", "not_started": "not started"}
    return "\n\n".join(
        f"{', '.join(ids)}: {status.get(s, s)}\n{message}".rstrip()
        for (s, message), ids in groups.items()
    )


def check_extra(check: dict) -> dict:
    """What the check JSON says about the run, for the instructor: isolation, which checks, each file's sha256."""
    extra = {key: check[key] for key in ("isolation", "checks") if key in check}
    hashes = {
        e["name"]: e.get("sha256", e.get("files"))
        for e in check.get("exercises", [])
        if "sha256" in e or "files" in e
    }
    return extra | ({"sha256": hashes} if hashes else {})


def not_graded(reason: str, extra: dict, seconds: float) -> dict:
    """results.json with no points: the reason, for every exercise."""
    tests = [
        entry(f"{n}. {e.name}: {e.title}", 0.0, e.points, "Not graded: see the message above.")
        for n, e in enumerate(EXERCISES, 1)
    ]
    return document(0.0, reason, tests, extra, seconds)


def with_note(results: dict, score: float, note: str) -> dict:
    """The results with a new score (a late penalty's) and a note on top of what the student reads."""
    return results | {
        "score": float(score),
        "output": outlet.terminal(note) + "\n" + results.get("output", ""),
    }


def entry(name: str, score: float, max_score: float, output: str) -> dict:
    """One test of results.json, always shown to the student."""
    return {
        "name": name,
        "score": float(score),
        "max_score": float(max_score),
        "output": outlet.terminal(output),
        "visibility": "visible",
    }


def document(score: float, output: str, tests: list[dict], extra: dict, seconds: float) -> dict:
    """The whole results.json; outputs as plain text (outlet.terminal), since they quote names and values the student chose."""
    return {
        "score": float(score),
        "output": outlet.terminal(output),
        "output_format": "text",
        "test_output_format": "text",
        "execution_time": round(seconds),
        "tests": tests,
        "extra_data": extra,
    }
