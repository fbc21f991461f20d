"""Uploads in every shape, and the student's text as data: the collector's filing, the notebook stand-in, the CSV's cells."""

import io
import json
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.course.nbgrader import notebook
from grader.course.nbgrader.autograde import KitNotebookExporter, changed_graded_cells
from grader.course.nbgrader.collect import (
    KitCollector,
    download_name,
    file_id,
    stand_in,
    what_was_uploaded,
)
from grader.course.rows import COLUMNS, row
from grader.paths import MODULES
from grader.sandbox import intake


@pytest.mark.parametrize(
    "found, filed",
    [
        ("scores.py", "exercises/scores.py"),  # flat upload
        ("mine/attention-by-hand/exercises/heads.py", "exercises/heads.py"),  # a zip of the folder
        ("week4/training.py", "exercises/training.py"),  # in a folder of the student's own
        ("attention-by-hand/attention-by-hand/exercises/scores.py", "exercises/scores.py"),
        ("attention-by-hand/attention-by-hand.ipynb", "attention-by-hand.ipynb"),
        ("notes.py", "notes.py"),  # not a module of the kit: left where it is
    ],
)
def test_the_collector_files_each_module_as_exercises_name(found, filed):
    assert file_id(found) == filed


@given(st.sampled_from(MODULES + ("notes", "attention-by-hand")), st.integers(1, 10**6))
def test_a_module_canvas_numbered_on_resubmission_is_filed_as_the_module(stem, count):
    """Canvas names a file resubmitted under the same name scores-1.py, scores-2.py: still the student's scores.py."""
    filed = f"exercises/{stem}.py" if stem in MODULES else f"{stem}-{count}.py"
    assert file_id(f"{stem}-{count}.py") == filed


WORDS = st.lists(
    st.text(st.characters(categories=["L"]), min_size=1, max_size=12), min_size=1, max_size=4
)
IDS = st.integers(1, 10**9).map(str)


def named_as(file_name: str) -> tuple[str, tuple[str, str]] | None:
    """download_name of a file (or, ending in '_', a folder) of this name at a download's top."""
    with tempfile.TemporaryDirectory() as folder:
        entry = Path(folder) / file_name
        entry.mkdir() if file_name.endswith("_") else entry.write_bytes(b"")
        return download_name(entry)


@given(
    WORDS,
    IDS,
    IDS,
    st.sampled_from(["", "late_", "LATE_"]),
    st.sampled_from(["scores.py", "work.zip", "my_notes_2.txt"]),
)
def test_canvass_file_names_give_the_user_id_and_lastfirst_as_the_last_name(
    words, user, attachment, late, file
):
    lastfirst = "".join(
        words
    ).lower()  # Canvas's: the last name and the first run together, as one word
    assert named_as(f"{lastfirst}_{late}{user}_{attachment}_{file}") == (user, ("", lastfirst))


@given(WORDS, IDS)
def test_moodles_folder_names_give_the_id_and_the_name_split_at_its_last_space(words, user):
    expected = (" ".join(words[:-1]), words[-1]) if len(words) > 1 else (words[0], "")
    assert named_as(f"{' '.join(words)}_{user}_assignsubmission_file_") == (user, expected)


def test_a_name_a_download_does_not_give_is_none():
    assert named_as("scores.py") is None and named_as("ada_assignsubmission_file_") is None


def test_zip_collect_names_the_students_of_a_download_as_moodle_or_canvas_named_their_uploads(
    tmp_path,
):
    work = io.BytesIO()
    with zipfile.ZipFile(work, "w") as inner:
        inner.writestr("exercises/scores.py", "")
    download = tmp_path / "archive" / "submissions.zip"
    download.parent.mkdir()
    with zipfile.ZipFile(
        download, "w"
    ) as archive:  # both LMSs' shapes in one download, for brevity
        archive.writestr("Ada King Lovelace_1001_assignsubmission_file_/exercises/scores.py", "")
        archive.writestr("hopperg_2001_9001_scores.py", "")  # Canvas's flat files
        archive.writestr("hopperg_2001_9002_attention-by-hand.ipynb", "{}")
        archive.writestr(
            "turingalan_LATE_2002_9003_work.zip", work.getvalue()
        )  # unpacked beside it
        archive.writestr("nobody_2003_9004_notes.txt", "")  # no student the pattern collected
    intake.unpack(download, tmp_path / "extracted")
    collector = KitCollector(named_regexp=".*", valid_ext=[".ipynb", ".py"])
    collector.extracted_root = lambda: PurePosixPath(tmp_path / "extracted")
    assert collector.named({"1001", "2001", "2002", "ada"}) == {
        "1001": ("Ada King", "Lovelace"),
        "2001": ("", "hopperg"),
        "2002": ("", "turingalan"),
    }


def test_a_stand_in_notebook_says_what_the_upload_held():
    why = what_was_uploaded({"exercises/scores.py"}, ["essay.docx"])
    nb = nbformat.reads(stand_in("week-4", why), as_version=4)
    assert "scores.py" in nb.cells[0].source and "essay.docx" in nb.cells[0].source
    assert changed_graded_cells(nb) == ""  # the kit's graded cells, as released


def exported(text: str) -> dict:
    """The notebook KitNotebookExporter makes of a submitted file's text."""
    resources = {"nbgrader": {"assignment": "week-4", "notebook": "week-4"}}
    output, _ = KitNotebookExporter().from_file(io.StringIO(text), resources=resources)
    return json.loads(output)


def test_a_notebook_that_is_not_json_is_replaced_by_the_kits_with_a_note():
    text = notebook.dumps("week-4")[:-300]
    nb = exported(text)
    assert "could not be read as a notebook" in "".join(nb["cells"][0]["source"])
    assert (
        nbformat.validate(nbformat.from_dict(nb)) is None
        and changed_graded_cells(nbformat.from_dict(nb)) == ""
    )


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda meta: meta.update(grade=False), "test_scores was changed"),
        (lambda meta: meta.update(grade_id="mine"), "'mine'"),
        (lambda meta: meta.update(points=1000), "test_scores was changed"),
    ],
)
def test_a_notebook_whose_graded_cells_were_reflagged_is_replaced_with_a_note(change, said):
    nb = notebook.build("week-4")
    graded = next(cell for cell in nb["cells"] if "nbgrader" in cell["metadata"])
    change(graded["metadata"]["nbgrader"])
    replaced = exported(json.dumps(nb))
    assert said in "".join(replaced["cells"][0]["source"])


def test_an_intact_notebook_is_kept_as_submitted():
    nb = notebook.build("week-4")
    nb["cells"].insert(
        0, {"cell_type": "markdown", "id": "mine", "metadata": {}, "source": "my own notes"}
    )
    assert "".join(exported(json.dumps(nb))["cells"][0]["source"]) == "my own notes"


def test_the_autograde_settings_sanitize_the_students_html():
    from grader.course.nbgrader.assignment import AUTOGRADE

    assert (
        "grader.course.nbgrader.autograde.SanitizeStudentHTML" in AUTOGRADE
        and "KitNotebookExporter" in AUTOGRADE
    )


def test_every_row_is_written_safe(tmp_path):
    folder = tmp_path / b"=Jos\xe9".decode("utf-8", "surrogateescape")
    (upload,) = intake.uploads([folder])
    cells = row(upload, 2, tmp_path / "none.json", "-cmd output\n", False, 300, 1.0)
    assert (
        cells["student"] == "'=Jos\\xe9"
        and cells["reason"] == "'-cmd output"
        and set(cells) <= set(COLUMNS)
    )
    ",".join(cells.values()).encode("utf-8")  # writable as UTF-8


def test_the_students_html_and_scripts_are_cleaned_once_and_stored_as_they_show():
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    from grader.course.nbgrader.autograde import SanitizeStudentHTML

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "## Notes\n\nnotes <script>alert(1)</script> <b onclick='x()'>b</b> [l](javascript:x()) <javascript:y>\n\n"
            "- a list\n\n  ![far](https://elsewhere.example/x.png) [live](javascript:z())"
        ),
        nbformat.v4.new_code_cell("display(...)"),
    ]
    shown_html = nbformat.v4.new_output(
        "display_data", {"text/html": "<script>alert(2)</script><i>i</i>", "text/plain": "x"}
    )
    script = nbformat.v4.new_output(
        "display_data", {"application/javascript": "alert(3)", "text/plain": "<js>"}
    )
    link = nbformat.v4.new_output(
        "display_data", {"text/markdown": "[l](javascript:x())", "text/plain": "md"}
    )
    far = nbformat.v4.new_output(
        "display_data",
        {"image/png": "iVBOR"},
        metadata={"image/png": {"width": "1 onerror=alert(4)"}},
    )
    nb.cells[1].outputs = [shown_html, script, link, far]
    nb, _ = SanitizeStudentHTML().preprocess(nb, {})
    notes = nb.cells[0].source
    # as the feedback page renders it: as it is
    assert "\n" not in notes and markdown2html_mistune(notes).strip() == notes
    assert "<h2>Notes" in notes and "<b>b</b>" in notes and ">l</a>" in notes and "a list" in notes
    assert not [
        bad
        for bad in (
            "<script",
            "alert(1)",
            "onclick",
            'href="javascript',
            "<img",
            "elsewhere.example",
        )
        if bad in notes
    ]
    assert nb.cells[1].outputs[0].data == {"text/html": "<i>i</i>", "text/plain": "x"}
    assert nb.cells[1].outputs[1].data == {"text/plain": "<js>"}
    assert (
        set(nb.cells[1].outputs[2].data) == {"text/html", "text/plain"}
        and "javascript" not in nb.cells[1].outputs[2].data["text/html"]
    )
    # the page writes an image's width into its tag, unquoted
    assert nb.cells[1].outputs[3].metadata == {}


@pytest.mark.parametrize(
    "cells, said",
    [(984, "it has 1,001 cells, more than the 1,000"), (20, "it is larger than 8 MiB")],
)
def test_a_notebook_past_its_bounds_is_replaced_before_it_is_read(cells, said):
    """The attack: a 16 MiB notebook of 200,000 markdown cells held autograde for minutes, 1.3 GiB."""
    nb = notebook.build("week-4")
    nb["cells"] = [
        {"cell_type": "markdown", "metadata": {}, "source": "x" * (1 << 20 if cells == 20 else 1)}
    ] * cells + nb["cells"]  # and its 17
    replaced = exported(json.dumps(nb))
    assert said in "".join(replaced["cells"][0]["source"]) and len(replaced["cells"]) < 30
