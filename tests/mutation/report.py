"""Grade every mutant of the reference and write the mutation report: report.json and REPORT.md beside this file.

Usage: python tests/mutation/report.py [--check | --markdown]
Every first-order mutant (mutants.py) is graded by its own exercise's checks (grade.py); a mutant
the checks pass must be in equivalent.EQUIVALENT, whose differential run beside the reference must
find no difference; any other is a survivor. --check writes nothing and exits 1 when the report
would change (a survivor, a new mutant, another verdict); --markdown writes REPORT.md from report.json.
"""

import hashlib
import json
import os
import sys
import time
from collections import Counter
from importlib import metadata
from pathlib import Path

import equivalent
import grade
import mutants

HERE = Path(__file__).resolve().parent
JSON = HERE / "report.json"
MARKDOWN = HERE / "REPORT.md"
# with solutions/*.py and Cosmic Ray's version: the mutant set
MADE_FROM = [HERE / "operators.py", HERE / "mutants.py"]


def mutant_set_hash() -> str:
    """What the set of mutants is a function of: the reference, this folder's operators and generator, Cosmic Ray's version."""
    digest = hashlib.sha256(metadata.version("cosmic-ray").encode())
    for path in [*sorted(mutants.SOLUTIONS_DIR.glob("*.py")), *MADE_FROM]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:24]


def entry(mutant: mutants.Mutant, verdict: dict, differences: list[str] | None) -> dict:
    """One mutant's line of the report."""
    found = {
        "id": mutant.id,
        "module": mutant.module,
        "function": mutant.function,
        "operator": mutant.operator,
        "line": mutant.line,
        "sha": mutant.sha,
        "diff": mutant.diff(),
    }
    if verdict["status"] != "passed":
        return found | {
            "verdict": "killed",
            "failed": verdict["failed"],
            "public": verdict["public"],
        }
    if mutant.id in equivalent.EQUIVALENT and differences == []:
        return found | {"verdict": "equivalent", "reason": equivalent.EQUIVALENT[mutant.id].reason}
    said = "not in equivalent.EQUIVALENT" if differences is None else "; ".join(differences[:3])
    return found | {"verdict": "survived", "why": said}


def build(progress=None) -> dict:
    """The report: every mutant's verdict, the equivalents' runs, and the time grading took."""
    every = mutants.every_mutant()
    verdicts, graded_now, seconds = grade.grade(every, progress)
    differences = {
        m.id: equivalent.run(m)
        for m in every
        if verdicts[m.id]["status"] == "passed" and m.id in equivalent.EQUIVALENT
    }
    lines = [entry(m, verdicts[m.id], differences.get(m.id)) for m in every]
    each = [verdicts[m.id]["seconds"] for m in every]
    return {
        "made_by": "python tests/mutation/report.py",
        "mutant_set": mutant_set_hash(),
        "checks": grade.checks_hash(),
        "counts": dict(Counter(line["verdict"] for line in lines)),
        "grading": {
            "graded_now": graded_now,
            "seconds": round(seconds, 1),
            "seconds_of_each_summed": round(sum(each), 1),
            "processes": grade.PROCESSES,
        },
        "mutants": lines,
    }


def markdown(report: dict) -> str:
    """REPORT.md: the counts by module and operator, the equivalents with their reasons, the mutants only hidden checks kill."""
    lines = report["mutants"]
    out = [
        "# Mutation report of the reference",
        "",
        "Made by `python tests/mutation/report.py` (mutants.py, operators.py, grade.py, equivalent.py beside this file);",
        "report.json holds every mutant's id, operator, line, diff and verdict. Each mutant is the reference with one",
        "change in one module, graded by that exercise's checks, public and hidden, as `grader check EXERCISE` grades a",
        "submission in the full kit (the student's profile without shrinking: same examples, same verdict).",
        "",
        f"**{len(lines)} mutants: {report['counts'].get('killed', 0)} killed, {report['counts'].get('equivalent', 0)} equivalent, "
        f"{report['counts'].get('survived', 0)} survived.**",
        "",
        "## By module",
        "",
        "| module | mutants | killed | of which by a public check | equivalent | survived |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for module in dict.fromkeys(line["module"] for line in lines):
        mine = [line for line in lines if line["module"] == module]
        count = Counter(line["verdict"] for line in mine)
        public = sum(1 for line in mine if line.get("public"))
        out.append(
            f"| {module} | {len(mine)} | {count['killed']} | {public} | {count['equivalent']} | {count['survived']} |"
        )
    out += [
        "",
        "## By operator",
        "",
        "| operator | mutants | killed | equivalent | survived |",
        "| --- | --- | --- | --- | --- |",
    ]
    for operator, n in sorted(Counter(line["operator"] for line in lines).items()):
        count = Counter(line["verdict"] for line in lines if line["operator"] == operator)
        out.append(
            f"| {operator} | {n} | {count['killed']} | {count['equivalent']} | {count['survived']} |"
        )
    out += ["", "## Survivors", ""]
    survivors = [line for line in lines if line["verdict"] == "survived"]
    out += [
        f"- `{line['id']}` ({line['function']}, line {line['line']}): {line['why']}"
        for line in survivors
    ] or ["None."]
    out += [
        "",
        "## Equivalent mutants",
        "",
        "Each was run beside the reference on the inputs of tests/mutation/inputs.py (one entry to the comparison's sizes;",
        "±3e9, ±1e150, ±1e300, 1e-150, whole numbers, -inf, float32; dicts in the comparison's orders), every input twice,",
        "comparing what each call returns and leaves of its arguments.",
        "",
    ]
    for line in (line for line in lines if line["verdict"] == "equivalent"):
        out += [
            f"### `{line['id']}` ({line['function']}, line {line['line']})",
            "",
            line["reason"] + ".",
            "",
            "```diff",
            line["diff"],
            "```",
            "",
        ]
    hidden = [line for line in lines if line["verdict"] == "killed" and not line["public"]]
    out += [
        "## Killed by hidden checks only",
        "",
        "The student's kit, which has the public checks only, passes these.",
        "",
    ]
    out += [
        f"- `{line['id']}` ({line['function']}, line {line['line']}): {', '.join(line['failed'])}"
        for line in hidden
    ] or ["None."]
    full = report["full_run"]
    out += [
        "",
        "## Time",
        "",
        f"The last run that graded nearly every mutant graded {full['graded']} of them in {full['seconds'] / 60:.0f} minutes of wall time, "
        f"{full['processes']} at a time, on {full['cores']} cores at a load average of about {full['load']} (the machine shared), "
        f"on {full['date']}. Verdicts are kept in the user's cache folder (grade.py), keyed by the mutant's source and the checks'",
        "hash: a run after a change of the checks or the reference grades everything again; a run with nothing changed grades nothing.",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    old = json.loads(JSON.read_text(encoding="utf-8")) if JSON.exists() else {}
    if "--markdown" in argv:
        MARKDOWN.write_text(markdown(old), encoding="utf-8")
        return 0
    load = os.getloadavg()[1]
    report = build(lambda m, v: print(f"{m.id}: {v['status']} ({v['seconds']} s)", flush=True))
    # kept only as a full run's time: a run from kept verdicts changes nothing
    grading = report.pop("grading")
    if grading["graded_now"] >= 0.9 * len(
        report["mutants"]
    ):  # (nearly) nothing was kept: this run's time is a full run's
        load = round((load + os.getloadavg()[1]) / 2, 1)
        day = time.strftime("%Y-%m-%d")
        report["full_run"] = {
            "graded": grading["graded_now"],
            "seconds": grading["seconds"],
            "processes": grading["processes"],
        }
        report["full_run"] |= {"cores": os.cpu_count(), "load": load, "date": day}
    else:
        report["full_run"] = old.get("full_run", {})
    if "--check" in argv:
        same = [(m["id"], m["verdict"]) for m in old.get("mutants", [])] == [
            (m["id"], m["verdict"]) for m in report["mutants"]
        ]
        print(
            "the report is up to date"
            if same
            else "the report would change: run python tests/mutation/report.py"
        )
        return 0 if same and not report["counts"].get("survived") else 1
    JSON.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    MARKDOWN.write_text(markdown(report), encoding="utf-8")
    print(f"wrote {JSON} and {MARKDOWN}: {report['counts']}")
    return 1 if report["counts"].get("survived") else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
