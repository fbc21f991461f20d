"""grader report: the class at a glance from a batch CSV, in the terminal and as a self-contained HTML page."""

import csv
import json
from html.parser import HTMLParser

from click.testing import CliRunner

from grader.cli import main
from grader.course.rows import COLUMNS, row
from grader.exercises import EXERCISES
from grader.sandbox import intake

MISTAKE = "exp without subtracting each row's maximum first (it overflows past 709)"


def check_json(path, failing: dict[str, str], stopped: str = "", stubs: str = "") -> None:
    """A `grader check --json` result: the given checks (id -> message) fail, exercise stopped's checks stopped (it did not
    import), exercise stubs is not started, every other check passes."""
    exercises = []
    for exercise in EXERCISES:
        ids = [f"{exercise.name}.one", f"{exercise.name}.two"] + [i for i in failing if i.startswith(exercise.name + ".")]
        checks = [{"id": i, "status": "failed" if i in failing else "passed", "message": failing.get(i, "")} for i in dict.fromkeys(ids)]
        for check in checks:  # a known mistake is the check's own field, as the checks name it
            if MISTAKE in check["message"]:
                check["mistake"] = MISTAKE
        points = exercise.points if not any(i in failing for i in ids) else exercise.points / 2
        status = "passed" if points == exercise.points else "failed"
        if exercise.name in (stopped, stubs):
            status, points = ("error", 0.0) if exercise.name == stopped else ("not_started", 0.0)
            checks = [{"id": i, "status": status, "message": "cannot be imported"} for i in ids]
        exercises.append({"name": exercise.name, "status": status, "points": points, "max_points": exercise.points, "checks": checks})
    path.write_text(json.dumps({"exercises": exercises, "total": {"points": sum(e["points"] for e in exercises)}, "isolation": "user"}))


def upload(path):
    """The upload batch makes of one folder."""
    (made,) = intake.uploads([path])
    return made


def batch_csv(tmp_path):
    """A batch CSV: right, softmax overflowing (twice), one named like HTML, one whose softmax does not import, one not graded."""
    classes = {
        "ada": ({}, ""),
        "bob": ({"softmax.rows_sum_to_one": f"NaN\n  This looks like a known mistake: {MISTAKE}."}, ""),
        "cy": ({"softmax.rows_sum_to_one": f"NaN\n  This looks like a known mistake: {MISTAKE}.", "scores.scaled": "no 1/sqrt(d)"}, ""),
        "<img src=x onerror=alert(1)>": ({"scores.scaled": "no 1/sqrt(d)"}, ""),
        "dee": ({}, "softmax"),
    }
    rows = []
    for number, (student, (failing, stopped)) in enumerate(classes.items()):
        result = tmp_path / f"{number}.json"
        check_json(result, failing, stopped, stubs="training" if student == "dee" else "")
        rows.append(row(upload(tmp_path / student), 1, result, "", False, 300, 1.0) | {"seconds": f"{number + 1}.5"})
    rows.append(row(upload(tmp_path / "ivy"), 2, tmp_path / "none.json", "Cannot check: no modules", False, 300, 0.5) | {"seconds": "0.5"})
    path = tmp_path / "grades.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


class Tables(HTMLParser):
    """Each table of a page by id, as rows of cell texts; and whether any script or handler is in it."""

    def __init__(self):
        super().__init__()
        self.tables, self.table, self.live = {}, None, False

    def handle_starttag(self, tag, attrs):
        self.live |= tag == "script" or any(name.startswith("on") for name, _ in attrs)
        if tag == "table":
            self.table = self.tables.setdefault(dict(attrs).get("id"), [])
        elif tag == "tr" and self.table is not None:
            self.table.append([])
        elif tag in ("td", "th") and self.table is not None:
            self.table[-1].append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.table and self.table[-1]:
            self.table[-1][-1] += data


def test_the_class_report_counts_checks_mistakes_and_times(tmp_path):
    csv_file, page = batch_csv(tmp_path), tmp_path / "class.html"
    said = CliRunner().invoke(main, ["report", str(csv_file), "--html", str(page)])
    assert said.exit_code == 0, said.output
    assert "6 submissions: 1 passed every check, 4 graded, with some check not passing, 1 unreadable" in said.output
    assert "    2  scores.scaled" in said.output and "    2  softmax.rows_sum_to_one" in said.output  # dee's stopped: not failed
    assert "softmax.one" not in said.output
    table = {line.split()[0]: line.split()[3:] for line in said.output.splitlines()[3:8]}
    assert table["softmax"] == ["2", "of", "5", "2", "0", "1"] and table["training"] == ["4", "of", "5", "0", "1", "0"]
    assert f"    2  {MISTAKE}" in said.output
    parsed = Tables()
    parsed.feed(page.read_text(encoding="utf-8"))
    assert not parsed.live  # no script, no handler: the student's name is text
    assert sorted(tuple(r) for r in parsed.tables["checks"][1:]) == [("2", "", "scores.scaled"), ("2", "", "softmax.rows_sum_to_one")]
    assert parsed.tables["mistakes"][1:] == [["2", "", MISTAKE]]
    assert [r[1] for r in parsed.tables["slowest"][1:5]] == ["dee", "<img src=x onerror=alert(1)>", "cy", "bob"]
    assert [r[0] for r in parsed.tables["exercises"][1:]] == [e.name for e in EXERCISES]
    assert parsed.tables["exercises"][0][3:] == ["full points", "some checks fail", "not started", "did not run"]
    assert parsed.tables["exercises"][3][1:] == ["12.0 / 20", "", "2 of 5", "2", "0", "1"]  # softmax


def test_a_csv_without_the_check_columns_is_refused_with_what_to_do(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text("student,folder,status\nada,/x,passed\n")
    said = CliRunner().invoke(main, ["report", str(old)])
    assert said.exit_code == 2 and "rerun `grader batch`" in said.output
    assert CliRunner().invoke(main, ["report", str(tmp_path / "none.csv")]).exit_code == 2
