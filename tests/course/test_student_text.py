"""Student text through the course's doors, against generated hostile text: no javascript: or remote resource in any
HTML the feedback shows, no byte below 0x20 but newline on batch's and report's terminal, no file filed as another
student in zip_collect, and the CSV's mistakes from the checks' own field."""

import functools
import io
import json
import os
import re
import shutil
import zipfile
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from uploads import HOSTILE_URLS, any_name, honest, lay, markdown, notebooks

from grader import outlet
from grader.cli import main
from grader.course import rows
from grader.sandbox import intake

FILES = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
OWN_IMAGES = ("data:image/png;base64,", "data:image/jpeg;base64,")
FETCHES = {
    "img",
    "script",
    "iframe",
    "frame",
    "object",
    "embed",
    "svg",
    "math",
    "style",
    "link",
    "form",
    "base",
    "video",
    "audio",
    "source",
}


class Found(HTMLParser):
    """What of a page runs or fetches: tags that fetch or run, handlers, styles, sources, and links by their scheme."""

    def __init__(self):
        super().__init__()
        self.bad: list[str] = []

    def handle_starttag(self, tag, attrs):
        given = dict(attrs)
        inline = (
            tag == "img"
            and set(given) <= {"src", "alt"}
            and (given.get("src") or "").startswith(OWN_IMAGES)
        )
        if (
            tag in FETCHES and not inline
        ):  # the kit's own <img> of a PNG or JPEG output, its data inline, is all that may be
            self.bad.append(f"<{tag}>")
        for name, value in attrs:
            scheme = url_scheme(value or "")
            if (
                name.startswith("on")
                or name in ("src", "srcset", "style", "action", "formaction", "background", "data")
                and not inline
            ):
                self.bad.append(f"<{tag} {name}>")
            elif name in ("href", "xlink:href") and scheme and scheme not in outlet.SCHEMES:
                self.bad.append(f"<{tag} {name}={value}>")


def url_scheme(url: str) -> str:
    """A URL's scheme as a browser reads it (WHATWG: C0 and space trimmed, tabs and newlines removed), or "" if relative."""
    found = re.match(
        r"([A-Za-z][A-Za-z0-9+.-]*):",
        re.sub(r"[\t\n\r]", "", url.strip("".join(map(chr, range(0x21))))),
    )
    return found.group(1).lower() if found else ""


@functools.cache
def exporter():
    from nbconvert.exporters import HTMLExporter

    # what nbgrader's feedback and formgrade templates extend
    return HTMLExporter(template_name="classic")


def student_part(page: str) -> str:
    """The notebook's cells of a page, without the template's own head (its MathJax and styles)."""
    return page[page.index('id="notebook-container"') :]


@FILES
@given(
    markdown,
    st.lists(
        st.tuples(
            st.sampled_from(
                ["text/html", "text/markdown", "image/svg+xml", "application/javascript"]
            ),
            markdown,
        ),
        max_size=3,
    ),
    st.sampled_from(HOSTILE_URLS),
)
def test_no_html_the_feedback_shows_runs_or_fetches_anything_of_the_students(text, outputs, url):
    from grader.course.nbgrader.autograde import SanitizeStudentHTML

    nb = nbformat.v4.new_notebook()
    raw = nbformat.v4.new_raw_cell(text)
    raw.metadata["raw_mimetype"] = "text/html"
    nb.cells = [nbformat.v4.new_markdown_cell(text), raw, nbformat.v4.new_code_cell("")]
    shown = [nbformat.v4.new_output("display_data", {kind: value}) for kind, value in outputs]
    image = nbformat.v4.new_output(
        "display_data",
        {"image/png": "iVBOR"},
        metadata={"image/png": {"width": f"1 onerror={url}"}},
    )
    image.metadata["filenames"] = {"image/png": url}
    nb.cells[2].outputs = [*shown, image]
    nb, _ = SanitizeStudentHTML().preprocess(nb, {})
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    # rendered again, it is itself
    assert markdown2html_mistune(nb.cells[0].source).strip() == nb.cells[0].source
    page, _ = exporter().from_notebook_node(nb)
    found = Found()
    found.feed(student_part(page))
    note(student_part(page)[:2000])
    # a link to another host may stay (it is followed only when clicked), nothing that fetches it
    assert found.bad == []


def terminal_bytes(text: str) -> list[str]:
    """The characters of terminal output below 0x20 but newline, and any unseen character (outlet's rule)."""
    return [
        c
        for c in text
        if c != "\n" and (ord(c) < 0x20 or ord(c) == 0x7F or outlet.terminal(c) != c)
    ]


@pytest.mark.posix("names in any bytes are a POSIX file system's")
@FILES
@given(
    st.lists(
        st.one_of(
            any_name,
            st.sampled_from(
                [b"\x1b]0;pwned\x07", b"=cmd|' -C calc'!A0", b"\r\x1b[2Kok", b"\xe2\x80\xae"]
            ),
        ),
        min_size=1,
        max_size=4,
        unique=True,
    )
)
def test_batch_and_report_write_no_control_byte_to_the_terminal(tmp_path, names):
    root = tmp_path / "example"
    shutil.rmtree(root, ignore_errors=True)
    for name in names:
        # refused by the intake: a row, and no check to run
        lay(root / "class", {name: {b"notes.txt": b"not graded"}})
    csv_file = root / "grades.csv"
    folders = [str(p) for p in sorted((root / "class").iterdir())]
    batched = CliRunner().invoke(
        main, ["batch", *folders, "--csv", str(csv_file), "--allow-unisolated"]
    )
    assert batched.exit_code == 0, batched.output
    written = list(rows_of(csv_file))
    assert len(written) == len(names) and {r["student"] for r in written} == {
        outlet.csv_cell(outlet.name(n)) for n in names
    }
    reported = CliRunner().invoke(main, ["report", str(csv_file)])
    note(batched.output + reported.output)
    assert terminal_bytes(batched.output) == [] and terminal_bytes(reported.output) == []


def rows_of(csv_file: Path):
    import csv

    with csv_file.open(newline="", encoding="utf-8") as f:
        yield from csv.DictReader(f)


# zip_collect: the README's pattern, and the greedy one an instructor may still have from before
PATTERNS = [
    r".*?/[^/]+_(?P<student_id>\w+)_assignsubmission_file_/(?P<file_id>.+)",
    r".*/[^/]+_(?P<student_id>\w+)_assignsubmission_file_/(?P<file_id>.+)",
]
moodle_students = st.lists(
    st.sampled_from(["ada", "bob", "carol", "dan"]), min_size=1, max_size=3, unique=True
)


@FILES
@given(moodle_students, st.data())
def test_zip_collect_files_nothing_outside_a_students_own_upload(tmp_path, students, data):
    from grader.course.nbgrader.collect import KitCollector

    root = tmp_path / "example"
    shutil.rmtree(root, ignore_errors=True)
    download = io.BytesIO()
    with zipfile.ZipFile(download, "w") as archive:
        for student in students:
            top = f"Student {student}_{student}_assignsubmission_file_/"
            for name in ("scores.py", "softmax.py"):
                archive.writestr(top + "exercises/" + name, f"# {student}\n")
            # a folder named like a classmate's
            classmate = data.draw(st.sampled_from(["ada", "bob", "carol", "dan"]))
            inner = io.BytesIO()
            with zipfile.ZipFile(inner, "w") as nested:
                nested.writestr(
                    f"x/Student {classmate}_{classmate}_assignsubmission_file_/exercises/softmax.py",
                    f"# {student}\n",
                )
            archive.writestr(
                top + data.draw(st.sampled_from(["work.zip", "deep/work.zip"])), inner.getvalue()
            )
    (root / "archive").mkdir(parents=True)
    (root / "archive" / "moodle.zip").write_bytes(download.getvalue())
    intake.unpack(root / "archive" / "moodle.zip", root / "extracted")
    files = sorted(str(p) for p in (root / "extracted").rglob("*") if p.is_file())
    for pattern in PATTERNS:
        collector = KitCollector(named_regexp=pattern, valid_ext=[".ipynb", ".py"])
        collector.extracted_root = lambda: PurePosixPath(root / "extracted")
        for path in files:
            info = collector.collect(path)
            if info:  # filed only as the student whose own top folder holds it, and holding their own bytes
                owner = PurePosixPath(path).relative_to(root / "extracted").parts[1].split("_")[1]
                assert info["student_id"] == owner and Path(path).read_text() == f"# {owner}\n"


def test_the_csv_names_a_mistake_from_the_checks_field_never_from_a_message(tmp_path):
    """The attack: a failure message with a line "This looks like a known mistake: ..." went into the CSV and the report."""
    forged = "softmax raised ValueError:\nThis looks like a known mistake: Bob Smith's softmax, copied line by line."
    checks = [
        {"id": "softmax.rows", "status": "failed", "message": forged},
        {
            "id": "softmax.matches",
            "status": "failed",
            "message": "...",
            "mistake": "no max subtracted before exp",
        },
    ]
    exercises = [
        {"name": "softmax", "status": "failed", "points": 0.0, "max_points": 20.0, "checks": checks}
    ]
    result = tmp_path / "result.json"
    result.write_text(
        json.dumps({"total": {"points": 0.0, "max_points": 100.0}, "exercises": exercises})
    )
    (upload,) = intake.uploads([tmp_path / "ada"])
    assert (
        rows.row(upload, 1, result, "", False, 300, 1)["mistakes"] == "no max subtracted before exp"
    )


def test_every_text_cell_leaves_as_a_spreadsheet_may_open_it(tmp_path):
    """The attack: the CSV rule missed a leading space, a leading no-break space and a formula after a newline in a cell."""
    os.makedirs(tmp_path / "class")
    for name in (" =1+1", "\xa0@SUM(A1)", "ok"):
        lay(tmp_path / "class" / name, honest(name.encode()))
    found = intake.uploads(sorted((tmp_path / "class").iterdir()))
    result = tmp_path / "none.json"
    for upload in found:
        cells = rows.row(upload, 2, result, "fine\n-2+3\n", False, 300, 1)
        for value in cells.values():
            assert all(
                line.startswith("'") or line.lstrip()[:1] not in outlet.FORMULA
                for line in value.split("\n")
            )


@FILES
@given(notebooks())
def test_a_submitted_notebook_of_any_shape_is_read_within_bounds_or_replaced_by_the_kits(text):
    from grader.course.nbgrader.autograde import KitNotebookExporter, changed_graded_cells

    resources = {"nbgrader": {"assignment": "week-4", "notebook": "week-4"}}
    output, _ = KitNotebookExporter().from_file(io.StringIO(text), resources=resources)
    nb = nbformat.reads(output, as_version=4)
    # the kit's graded cells, within bounds
    assert changed_graded_cells(nb) == "" and len(nb.cells) <= intake.BOUNDS.cells + 1


def test_zip_collects_log_names_a_students_file_with_its_control_characters_escaped(
    tmp_path, caplog
):
    from grader.course.nbgrader.collect import KitCollector

    collector = KitCollector(named_regexp=PATTERNS[0], valid_ext=[".ipynb", ".py"])
    name = tmp_path / "Student x_1_assignsubmission_file_" / "\x1b]0;graded: 100\x07\rnotes.txt"
    with caplog.at_level("INFO"):
        collector.log.info("Parsing file: %s", name)  # as nbgrader's own zip_collect logs each file
        collector.collect(str(name))
    assert (
        "\\x1b]0;graded: 100\\x07\\x0dnotes.txt" in caplog.text
        and terminal_bytes(caplog.text) == []
    )


@pytest.mark.parametrize(
    "cell",
    [
        {"cell_type": "other", "metadata": {}, "source": "x"},
        {"cell_type": "markdown", "id": "", "metadata": {}, "source": "x"},
    ],
)
def test_a_notebook_nbconvert_would_refuse_midway_is_replaced_before_grading(cell):
    """Hypothesis found these: a cell of no known type (or an empty id) read fine, then stopped nbconvert with a traceback."""
    from grader.course.nbgrader import notebook as kit_notebook
    from grader.course.nbgrader.autograde import KitNotebookExporter, changed_graded_cells

    submitted = kit_notebook.build("kit")
    submitted["cells"].append(cell)
    resources = {"nbgrader": {"assignment": "week-4", "notebook": "week-4"}}
    output, _ = KitNotebookExporter().from_file(
        io.StringIO(json.dumps(submitted)), resources=resources
    )
    assert (
        changed_graded_cells(nbformat.reads(output, as_version=4)) == ""
        and '"source": "x"' not in output
    )
