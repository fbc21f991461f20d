"""grader report: the class at a glance from a batch CSV, in the terminal and as a self-contained HTML page."""

import csv
import json
import re
import shutil
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner
from course_env import environment, run

from grader.cli import main
from grader.course.rows import COLUMNS, row
from grader.course.similarity import MIN_TOKENS, TOP
from grader.exercises import EXERCISES
from grader.paths import MODULES, SOLUTIONS_DIR
from grader.sandbox import intake

MISTAKE = "exp without subtracting each row's maximum first (it overflows past 709)"


def check_json(path, failing: dict[str, str], stopped: str = "", stubs: str = "") -> None:
    """A `grader check --json` result: the given checks (id -> message) fail, exercise stopped's checks stopped (it did not
    import), exercise stubs is not started, every other check passes."""
    exercises = []
    for exercise in EXERCISES:
        ids = [f"{exercise.name}.one", f"{exercise.name}.two"] + [
            i for i in failing if i.startswith(exercise.name + ".")
        ]
        checks = [
            {
                "id": i,
                "status": "failed" if i in failing else "passed",
                "message": failing.get(i, ""),
            }
            for i in dict.fromkeys(ids)
        ]
        for check in checks:  # a known mistake is the check's own field, as the checks name it
            if MISTAKE in check["message"]:
                check["mistake"] = MISTAKE
        points = exercise.points if not any(i in failing for i in ids) else exercise.points / 2
        status = "passed" if points == exercise.points else "failed"
        if exercise.name in (stopped, stubs):
            status, points = ("error", 0.0) if exercise.name == stopped else ("not_started", 0.0)
            checks = [{"id": i, "status": status, "message": "cannot be imported"} for i in ids]
        exercises.append(
            {
                "name": exercise.name,
                "status": status,
                "points": points,
                "max_points": exercise.points,
                "checks": checks,
            }
        )
    path.write_text(
        json.dumps(
            {
                "exercises": exercises,
                "total": {"points": sum(e["points"] for e in exercises)},
                "isolation": "user",
            }
        )
    )


def upload(path):
    """The upload batch makes of one folder."""
    (made,) = intake.uploads([path])
    return made


def batch_csv(tmp_path):
    """A batch CSV: right, softmax overflowing (twice), one named like HTML, one whose softmax does not import, one not graded."""
    classes = {
        "ada": ({}, ""),
        "bob": (
            {"softmax.rows_sum_to_one": f"NaN\n  This looks like a known mistake: {MISTAKE}."},
            "",
        ),
        "cy": (
            {
                "softmax.rows_sum_to_one": f"NaN\n  This looks like a known mistake: {MISTAKE}.",
                "scores.scaled": "no 1/sqrt(d)",
            },
            "",
        ),
        "<img src=x onerror=alert(1)>": ({"scores.scaled": "no 1/sqrt(d)"}, ""),
        "dee": ({}, "softmax"),
    }
    rows = []
    for number, (student, (failing, stopped)) in enumerate(classes.items()):
        result = tmp_path / f"{number}.json"
        check_json(result, failing, stopped, stubs="training" if student == "dee" else "")
        rows.append(
            row(upload(tmp_path / student), 1, result, "", False, 300, 1.0)
            | {"seconds": f"{number + 1}.5"}
        )
    rows.append(
        row(
            upload(tmp_path / "ivy"),
            2,
            tmp_path / "none.json",
            "Cannot check: no modules",
            False,
            300,
            0.5,
        )
        | {"seconds": "0.5"}
    )
    path = tmp_path / "grades.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


class Tables(HTMLParser):
    """Each table of a page by id, as rows of cell texts; each row's id; every link's target, each bar's width; the SVG's
    rectangles and title; and whether any script, handler or fetched resource is in it."""

    def __init__(self):
        super().__init__()
        self.tables, self.table, self.live, self.row_ids, self.links, self.bars, self.rects = (
            {},
            None,
            False,
            set(),
            [],
            {},
            [],
        )
        self.title, self.in_title = "", False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.live |= tag in ("script", "img", "iframe") or any(
            name.startswith("on") for name in attrs
        )
        if tag == "table":
            self.table = self.tables.setdefault(attrs.get("id"), [])
        elif tag == "tr" and self.table is not None:
            self.table.append([])
            self.row_ids.add(attrs.get("id"))
        elif tag in ("td", "th") and self.table is not None:
            self.table[-1].append("")
        elif tag == "a":
            self.links.append(attrs["href"])
        elif tag == "span" and "width:" in attrs.get("style", "") and self.table is not None:
            self.bars.setdefault(self.table_id(), []).append(
                float(attrs["style"].split("width:")[1].removesuffix("em"))
            )
        elif tag == "rect":
            self.rects.append(float(attrs["height"]))
        self.in_title = tag == "title"

    def table_id(self):
        return next(key for key, value in self.tables.items() if value is self.table)

    def handle_endtag(self, tag):
        if tag == "table":
            self.table = None
        self.in_title = False

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.table and self.table[-1]:
            self.table[-1][-1] += data


def parsed(page) -> Tables:
    tables = Tables()
    tables.feed(page.read_text(encoding="utf-8"))
    return tables


def test_the_class_report_counts_checks_mistakes_and_times(tmp_path):
    csv_file, page = batch_csv(tmp_path), tmp_path / "class.html"
    said = CliRunner().invoke(main, ["report", str(csv_file), "--html", str(page)])
    assert said.exit_code == 0, said.output
    assert (
        "6 submissions: 1 passed every check, 4 graded, with some check not passing, 1 unreadable"
        in said.output
    )
    assert re.search(r"^ +2  █+ +scores\.scaled$", said.output, re.M) and re.search(
        r"^ +2  █+ +softmax\.rows_sum_to_one$", said.output, re.M
    )
    assert "softmax.one" not in said.output  # dee's softmax stopped: not failed
    table = {
        line.split()[0]: line.split()[1:9]
        for line in said.output.splitlines()
        if line.split()[:1] in ([e.name] for e in EXERCISES)
    }
    assert table["softmax"] == ["12.0", "20", "2", "of", "5", "2", "0", "1"] and table[
        "training"
    ] == [
        "24.0",
        "30",
        "4",
        "of",
        "5",
        "0",
        "1",
        "0",
    ]
    assert re.search(rf"^ +2  █+ +{re.escape(MISTAKE)}$", said.output, re.M)
    tables = parsed(page)
    assert not tables.live  # no script, no handler: the student's name is text
    assert sorted(r[0] + r[2] for r in tables.tables["checks"][1:]) == [
        "2scores.scaledwho: 2 studentscy <img src=x onerror=alert(1)>",
        "2softmax.rows_sum_to_onewho: 2 studentsbob cy",
    ]
    assert tables.tables["mistakes"][1][2] == f"{MISTAKE}who: 2 studentsbob cy"
    assert [r[1] for r in tables.tables["slowest"][1:5]] == [
        "dee",
        "<img src=x onerror=alert(1)>",
        "cy",
        "bob",
    ]
    assert [r[0] for r in tables.tables["exercises"][1:]] == [e.name for e in EXERCISES]
    assert tables.tables["exercises"][0][4:] == ["some checks fail", "not started", "did not run"]
    # softmax
    assert tables.tables["exercises"][3][1:] == ["12.0 / 20", "2 of 5", "", "2", "0", "1"]


def test_the_totals_are_a_picture_in_the_page_and_the_terminal(tmp_path):
    csv_file, page = batch_csv(tmp_path), tmp_path / "class.html"
    said = CliRunner().invoke(main, ["report", str(csv_file), "--html", str(page)])
    totals = {
        line.split()[0]: line.split()[1:]
        for line in said.output.split("Totals")[1].split("\n\n")[0].splitlines()[1:]
    }
    # ivy's 0
    assert (
        totals["100"] == ["1", "█" * 15]
        and totals["90-99"] == ["2", "█" * 30]
        and totals["0"] == ["1", "█" * 15]
    )
    assert totals["10-19"] == ["0"] and len(totals) == 12
    tables = parsed(page)
    # the 90-99 bar, twice the others
    assert len(tables.rects) == 12 and max(tables.rects) == 2 * sorted(tables.rects)[-2]
    assert "1 at 0, 1 at 50-59, 1 at 80-89, 2 at 90-99, 1 at 100" in tables.title


def test_bars_are_scaled_to_the_largest_of_their_table(tmp_path):
    page = tmp_path / "class.html"
    CliRunner().invoke(main, ["report", str(batch_csv(tmp_path)), "--html", str(page)])
    tables = parsed(page)
    # the largest bar is full, not a sliver of the class
    assert max(tables.bars["checks"]) == 12 and max(tables.bars["exercises"]) == 12
    # softmax 2 of 5, scores 3 of 5, training 4 of 5, against the best 5 of 5
    assert sorted(tables.bars["exercises"]) == [4.8, 7.2, 9.6, 12.0, 12.0]


def test_from_each_check_and_mistake_to_the_students_concerned(tmp_path):
    page = tmp_path / "class.html"
    said = CliRunner().invoke(main, ["report", str(batch_csv(tmp_path)), "--html", str(page)])
    assert "who: cy, <img src=x onerror=alert(1)>" in said.output and "who: bob, cy" in said.output
    tables = parsed(page)
    students = {
        row_id: row
        for row_id, row in zip(
            sorted(i for i in tables.row_ids if i), tables.tables["students"][1:]
        )
    }
    assert (
        set(students) == {f"student{n}" for n in range(6)} and len(tables.tables["students"]) == 7
    )
    targets = [link.removeprefix("#") for link in tables.links]
    assert all(target in students for target in targets)
    by_name = {row[0]: row_id for row_id, row in students.items()}
    # two checks and one mistake, and the slowest table
    assert targets.count(by_name["cy"]) == 3 + 1
    assert (
        students[by_name["bob"]][2:4] == ["graded", "90"]
        and MISTAKE in students[by_name["bob"]][-1]
    )


def test_a_long_mistake_wraps_in_the_terminal_and_on_the_page(tmp_path):
    long = "a mistake " * 60
    csv_file = batch_csv(tmp_path)
    text = csv_file.read_text(encoding="utf-8").replace(MISTAKE, long.strip())
    csv_file.write_text(text, encoding="utf-8")
    page = tmp_path / "class.html"
    said = CliRunner().invoke(main, ["report", str(csv_file), "--html", str(page)])
    assert said.exit_code == 0 and "a mistake a mistake" in said.output
    width = shutil.get_terminal_size((100, 20)).columns
    assert (
        max(len(line) for line in said.output.splitlines() if "mistake a mistake" in line) <= width
    )
    html = page.read_text(encoding="utf-8")
    # the cell wraps, even a word longer than it
    assert "td.words{max-width:34em;overflow-wrap:anywhere}" in html
    # in the table of mistakes, and bob's and cy's rows
    assert html.count(f"<td class='words'>{long.strip()}") == 3


def test_a_csv_with_an_id_and_a_name_column_is_read_by_them(tmp_path):
    csv_file = batch_csv(tmp_path)
    with csv_file.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with csv_file.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["id", "name", *rows[0]])
        writer.writeheader()
        writer.writerows(
            {"id": f"u{n}", "name": f"Student {row['student']}", **row}
            for n, row in enumerate(rows)
        )
    page = tmp_path / "class.html"
    said = CliRunner().invoke(main, ["report", str(csv_file), "--html", str(page)])
    assert said.exit_code == 0 and "who: u1, u2" in said.output
    assert [row[:2] for row in parsed(page).tables["students"][1:3]] == [
        ["u0", "Student ada"],
        ["u1", "Student bob"],
    ]


def test_anonymised_reports_name_no_one_and_keep_the_key_apart(tmp_path):
    csv_file, key = batch_csv(tmp_path), tmp_path / "keep" / "report.key"
    key.parent.mkdir()
    for n in range(
        6
    ):  # each student's folder, holding the reference, so that the similarity report lists them all
        folder = tmp_path / ["ada", "bob", "cy", "<img src=x onerror=alert(1)>", "dee", "ivy"][n]
        shutil.copytree(
            SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__", "__init__.py")
        )
    written = [tmp_path / "class.html", tmp_path / "similarity.html", tmp_path / "pairs.csv"]
    args = [
        "report",
        str(csv_file),
        "--html",
        str(written[0]),
        "--similarity",
        str(written[1]),
        "--pairs",
        str(written[2]),
    ]
    first = CliRunner().invoke(main, [*args, "--anonymise", str(key)])
    assert first.exit_code == 0, first.output
    assert key.stat().st_mode & 0o777 == 0o600
    secret = key.read_text().strip()
    pages = [path.read_text(encoding="utf-8") for path in written]
    # the instructor's own paths
    said = "\n".join(line for line in first.output.splitlines() if not line.startswith("Wrote "))
    for text in [*pages, said]:
        assert secret not in text, text
        assert str(tmp_path) not in text, text
        assert not re.search(r"\b(ada|bob|cy|dee|ivy)\b|onerror", text), text
    # the shared lines shown without their comments
    assert "math.sqrt keeps float32 inputs float32" not in pages[1]
    pseudonyms = sorted(set(re.findall(r"anon-[0-9a-f]{10}", pages[0])))
    assert len(pseudonyms) == 6
    with written[2].open(encoding="utf-8") as f:
        assert {row["student"] for row in csv.DictReader(f)} == set(pseudonyms)
    again = CliRunner().invoke(main, [*args, "--anonymise", str(key)])
    assert again.exit_code == 0 and key.read_text().strip() == secret
    # the same key, the same
    assert (
        sorted(set(re.findall(r"anon-[0-9a-f]{10}", written[0].read_text(encoding="utf-8"))))
        == pseudonyms
    )
    named = CliRunner().invoke(main, args)
    assert named.exit_code == 0 and "math.sqrt keeps float32 inputs float32" in written[
        1
    ].read_text(encoding="utf-8")
    other = CliRunner().invoke(main, [*args, "--anonymise", str(tmp_path / "other.key")])
    assert other.exit_code == 0 and not set(
        re.findall(r"anon-[0-9a-f]{10}", written[0].read_text(encoding="utf-8"))
    ) & set(pseudonyms)


def test_a_key_file_that_is_a_report_or_no_key_is_refused(tmp_path):
    csv_file = batch_csv(tmp_path)
    said = CliRunner().invoke(
        main,
        [
            "report",
            str(csv_file),
            "--html",
            str(tmp_path / "k"),
            "--anonymise",
            str(tmp_path / "k"),
        ],
    )
    assert (
        said.exit_code == 2
        and "keep the key apart" in said.output
        and not (tmp_path / "k").exists()
    )
    (tmp_path / "notes.txt").write_text("my notes\n")
    said = CliRunner().invoke(
        main, ["report", str(csv_file), "--anonymise", str(tmp_path / "notes.txt")]
    )
    assert said.exit_code == 2 and "is not a key this kit made" in said.output


def test_a_csv_without_the_check_columns_is_refused_with_what_to_do(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text("student,folder,status\nada,/x,passed\n")
    said = CliRunner().invoke(main, ["report", str(old)])
    assert said.exit_code == 2 and "give its gradebook.db instead" in said.output
    assert CliRunner().invoke(main, ["report", str(tmp_path / "none.csv")]).exit_code == 2
    (tmp_path / "fake.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    said = CliRunner().invoke(main, ["report", str(tmp_path / "fake.db")])
    assert said.exit_code == 2 and "as nbgrader's gradebook" in said.output


def test_the_help_says_the_defaults_the_report_uses():
    said = " ".join(CliRunner().invoke(main, ["report", "--help"]).output.split())
    assert f"[default: {MIN_TOKENS}]" in said and f"[default: {TOP}]" in said


NAIVE_SOFTMAX = '''
import numpy as np


def softmax(x):
    """Softmax without subtracting the row's maximum: overflows for large scores."""
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)
'''


def course_command(cwd, *args: str) -> str:
    """Run a command of the course (nbgrader or grader) as the instructor does, its home in the course's folder; its output."""
    return run(cwd, environment(cwd.parent / "home"), *args)


@pytest.mark.slow
@pytest.mark.nbgrader
@pytest.mark.linux("grading with nbgrader is done on Linux")
def test_the_class_report_reads_nbgrader_s_gradebook_without_grading_again(tmp_path):
    gradebook = pytest.importorskip("nbgrader.api")
    course, assignment = tmp_path / "course", "attention-by-hand"
    course.mkdir()
    course_command(course, "grader", "nbgrader", ".")
    course_command(course, "nbgrader", "generate_assignment", assignment)
    reference = {m: (SOLUTIONS_DIR / f"{m}.py").read_text(encoding="utf-8") for m in MODULES}
    # cy hands in the stubs
    written = {"ada": reference, "bob": reference | {"softmax": NAIVE_SOFTMAX}, "cy": {}}
    for student, first, last in (
        ("ada", "Ada", "Lovelace"),
        ("bob", "Bob", "Jones"),
        ("cy", "Cy", "Young"),
        ("dee", "Dee", "Absent"),
    ):
        course_command(
            course,
            "nbgrader",
            "db",
            "student",
            "add",
            student,
            "--first-name",
            first,
            "--last-name",
            last,
        )
    for student, modules in written.items():
        folder = course / "submitted" / student / assignment
        shutil.copytree(course / "source" / assignment, folder)
        for name, text in modules.items():
            (folder / "exercises" / f"{name}.py").write_text(text, encoding="utf-8")
    course_command(course, "nbgrader", "autograde", assignment)
    with gradebook.Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s: {g.name.removeprefix("test_"): g.score for g in gb.find_submission_notebook(assignment, assignment, s).grades}
                  for s in written}  # fmt: skip
    page = tmp_path / "class.html"
    said = CliRunner().invoke(
        main,
        [
            "report",
            str(course / "gradebook.db"),
            "--html",
            str(page),
            "--pairs",
            str(tmp_path / "pairs.csv"),
        ],
    )
    assert said.exit_code == 0, said.output
    assert (
        "4 submissions: 1 passed every check, 2 graded, with some check not passing, 1 no submission in nbgrader's gradebook"
        in said.output
    )
    rows = {row[0]: row for row in parsed(page).tables["students"][1:]}
    assert {s: [float(p) for p in rows[s][4:9]] for s in written} == {
        s: [scores[s][e.name] for e in EXERCISES] for s in written
    }
    assert rows["ada"][1:4] == ["Ada Lovelace", "passed", "100"] and rows["dee"][1:3] == [
        "Dee Absent",
        "missing",
    ]
    exercises = {row[0]: row for row in parsed(page).tables["exercises"][1:]}
    mean = sum(scores[s]["softmax"] for s in written) / len(written)
    assert exercises["softmax"][1:3] == [f"{mean:.1f} / 20", "1 of 3"]
    # bob's fails some checks, cy's is not started
    assert exercises["softmax"][4:] == ["1", "1", "0"]
    assert "nbgrader's gradebook holds points per exercise" in said.output
    # nbgrader's folders, compared
    assert re.search(r"^ +1 +\d+ .* ada \(Ada Lovelace\)  ~  solutions/", said.output, re.M)
