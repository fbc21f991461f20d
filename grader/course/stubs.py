"""The stubs a student starts from, made from solutions/, so they are pristine whatever the kit's exercises/ holds."""

import ast
import json
import sys
import tempfile
from pathlib import Path

from grader.paths import MODULES, SOLUTIONS_DIR

# exercises/__init__.py: the one file with no counterpart to make it from (solutions/ has its own docstring)
PACKAGE = '''"""Your attention, by hand: fill in the five modules in lesson order.

scores -> masking -> softmax -> heads -> training. Check your work with
`grader check`; `grader hint EXERCISE` helps when you are stuck.
"""
'''


def stub_source(module: str) -> str:
    """exercises/MODULE.py as the kit ships it: the reference, each function's body after its docstring a raise."""
    if module == "__init__":
        return PACKAGE
    text = (SOLUTIONS_DIR / f"{module}.py").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    for node in reversed(
        ast.parse(text).body
    ):  # from the bottom, so earlier line numbers stay true
        if isinstance(node, ast.FunctionDef):
            first = node.body[1]
            lines[first.lineno - 1 : node.end_lineno] = [
                " " * first.col_offset + "raise NotImplementedError\n"
            ]
        # the standard library's imports, which only the reference uses, go with the blank line after them;
        # numpy and the earlier exercises stay, for the student to build on
        elif isinstance(node, ast.Import) and all(
            alias.name in sys.stdlib_module_names for alias in node.names
        ):
            blank = node.end_lineno < len(lines) and not lines[node.end_lineno].strip()
            del lines[node.lineno - 1 : node.end_lineno + blank]
    return "".join(lines)


def write_stubs(folder: Path) -> Path:
    """Write exercises/__init__.py and the five stubs into folder (made if need be); the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for module in ("__init__", *MODULES):
        (folder / f"{module}.py").write_text(stub_source(module), encoding="utf-8")
    return folder


def digests() -> dict[str, str]:
    """The sha256 of each stub as the grader compares it (line ends as \\n): grader/check/stubs.json's contents."""
    from grader.check.untouched import digest

    return {module: digest(stub_source(module).encode("utf-8")) for module in MODULES}


def write_digests() -> Path:
    """Write grader/check/stubs.json from the stubs; its path."""
    from grader.check.untouched import STUBS

    STUBS.write_text(json.dumps(digests(), indent=1) + "\n", encoding="utf-8")
    return STUBS


def not_started() -> dict:
    """The public checks' verdicts on the stubs, as a run gives them: grader/check/not_started.json's contents."""
    from grader.check.runner import run_checks
    from grader.check.untouched import record_digest

    with tempfile.TemporaryDirectory() as tmp:
        report = run_checks(write_stubs(Path(tmp) / "exercises"), checks="public", record=False)
    found = {
        e.name: [
            {"id": c.id, "status": c.status, "message": c.message, "calls": list(c.calls)}
            for c in e.checks
        ]
        for e in report.exercises
    }
    if any(check["status"] != "not_started" for checks in found.values() for check in checks):
        raise ValueError(f"a public check does not end as not started on the stubs: {found}")
    return {"fingerprint": record_digest(), "exercises": found}


def write_not_started() -> Path:
    """Write grader/check/not_started.json from a run of the public checks on the stubs; its path."""
    from grader.check.untouched import RECORD

    RECORD.write_text(json.dumps(not_started(), indent=1) + "\n", encoding="utf-8")
    return RECORD


if __name__ == "__main__":
    print(f"wrote {write_digests()}")
    print(f"wrote {write_not_started()}")
