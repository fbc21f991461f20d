"""The intake of submissions, against generated hostile uploads: links at any depth, names in any bytes, zips nested and
bombs, notebooks of any shape; and the named attacks on the batch route, each getting nothing."""

import dataclasses
import io
import json
import os
import shutil
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from uploads import SECRET, Link, Zip, any_name, honest, lay, mark, notebooks, packed, trees

from grader import outlet
from grader.paths import SOLUTIONS_DIR
from grader.sandbox import intake

pytestmark = pytest.mark.posix("names in any bytes and symbolic links are a POSIX file system's")
FILES = settings(
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ]
)
SMALL = intake.Bounds(
    module=1 << 12,
    upload=1 << 16,
    entries=200,
    depth=8,
    nesting=2,
    directory=1 << 14,
    notebook=1 << 16,
    cells=50,
)


def fresh(tmp_path: Path, name: str) -> Path:
    """An empty folder for one example (Hypothesis runs many in one test's tmp_path)."""
    folder = tmp_path / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    return folder


def a_class(tmp_path: Path, students: dict[bytes, dict]) -> Path:
    """The students' folders side by side in class/, beside a secret/ folder with modules no upload may reach."""
    root = fresh(tmp_path, "example")
    lay(root / "secret", {name.encode(): SECRET for name in intake.MODULE_FILES})
    for student, tree in students.items():
        lay(root / "class" / os.fsdecode(student), tree)
    return root / "class"


@FILES
@given(
    st.dictionaries(st.sampled_from([b"ada", b"bob", b"carol"]), st.none(), min_size=1).flatmap(
        lambda who: st.fixed_dictionaries({student: trees(student) for student in who})
    )
)
def test_no_link_is_followed_and_no_upload_holds_anothers_bytes(tmp_path, students):
    top = a_class(tmp_path, students)
    found = intake.uploads(sorted(top.iterdir()))
    # no row from outside
    assert sorted(upload.key for upload in found) == sorted(
        outlet.name(student) for student in students
    )
    for upload in found:
        submission = intake.take(upload, SMALL)
        note(f"{upload.key}: {submission.where or submission.problem}")
        for data in (
            submission.modules.values()
        ):  # each module the student's own, never a classmate's or the secret
            assert data.startswith(mark(os.fsencode(upload.key))) and SECRET not in data


@FILES
# a folder named exercises is a kit's, its student named by the folder above (`grader batch ada/exercises`)
@given(
    st.lists(
        any_name.filter(lambda name: name != b"exercises"), min_size=1, max_size=6, unique=True
    ),
    st.data(),
)
def test_every_top_level_entry_is_one_upload_named_one_to_one(tmp_path, names, data):
    root = fresh(tmp_path, "example")
    for name in names:
        lay(
            root / "class",
            {name: data.draw(st.sampled_from([{}, honest(name), {b"notes.txt": b"x"}]))},
        )
    found = intake.uploads(sorted((root / "class").iterdir()))
    # every folder one row, none shared
    assert len(found) == len(names) == len({upload.key for upload in found})
    assert {upload.key for upload in found} == {outlet.name(name) for name in names}
    for upload in found:
        assert "\n" not in upload.key and not [c for c in upload.key if ord(c) < 0x20]
        submission = intake.take(upload)
        assert submission.problem or submission.where == "exercises/"
        # an empty upload: 0 and why
        assert not submission.problem or "Upload your five files" in submission.problem


def test_a_folder_named_exercises_is_its_students_kit_folder(tmp_path):
    lay(tmp_path / "class", {b"ada": honest(b"ada"), b"bob": honest(b"bob")})
    found = intake.uploads([tmp_path / "class" / "ada" / "exercises", tmp_path / "class" / "bob"])
    assert [upload.key for upload in found] == ["ada", "bob"]
    assert len(intake.take(found[0]).modules) == len(intake.MODULE_FILES)


@FILES
@given(
    trees(b"ada", depth=4),
    st.sampled_from(
        [SMALL, dataclasses.replace(intake.BOUNDS, upload=1 << 18, entries=50, nesting=1)]
    ),
)
def test_nothing_is_read_past_its_bound(tmp_path, tree, bounds):
    folder = a_class(tmp_path, {b"ada": tree}) / "ada"
    (upload,) = intake.uploads([folder])
    tracemalloc.start()
    try:
        submission = intake.take(upload, bounds)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    note(submission.problem)
    # zip bombs of up to 4 MiB and every nesting, within the upload's bound
    assert peak < 3 * bounds.upload + (2 << 20)
    assert sum(map(len, submission.modules.values())) <= 5 * bounds.module


@pytest.mark.parametrize(
    "bomb, said",
    [(b"softmax.py", "softmax.py is larger than 1 MiB"), (b"deep.zip", "more than 32 MiB")],
)
def test_a_zip_bomb_is_refused_at_its_bound_unread_past_it(tmp_path, bomb, said):
    """The attack: a 1.2 MB zip unpacked past 1 GiB (here 64 MiB of zeros in 64 KiB, as a module and as a zip in the zip)."""
    lay(
        tmp_path / "ada",
        {b"work.zip": Zip({b"inner.zip": Zip(honest(b"ada"), zeros=64 << 20, bomb=bomb)})},
    )
    tracemalloc.start()
    submission = intake.take(intake.uploads([tmp_path / "ada"])[0])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert said in submission.problem and not submission.modules and peak < 80 << 20


@FILES
@given(notebooks())
def test_a_notebook_of_any_shape_is_read_within_its_bounds_or_refused(text):
    try:
        kept = intake.notebook(io.StringIO(text), SMALL)
    except intake.Refused as refused:
        assert "larger than" in str(refused) or "cells" in str(refused)
        return
    except ValueError:  # not JSON: the reader says so and stands the kit's notebook in
        return
    assert (
        len(kept) <= SMALL.notebook
        and len(json.loads(kept).get("cells", []) if isinstance(json.loads(kept), dict) else [])
        <= 50
    )


def class_of(tmp_path: Path, **students) -> list[intake.Upload]:
    """The uploads of a class laid out as given."""
    for student, tree in students.items():
        lay(tmp_path / "class" / student, tree)
    return intake.uploads(sorted((tmp_path / "class").iterdir()))


def test_a_link_to_a_classmate_gives_nothing(tmp_path):
    """The attack: a folder holding only `exercises -> ../bob` was graded passed 100.0 from bob's files."""
    ada, bob = class_of(tmp_path, ada={b"exercises": Link(b"../bob/exercises")}, bob=honest(b"bob"))
    taken = intake.take(ada)
    assert not taken.modules and "exercises (a link, left out)" in taken.problem
    assert intake.take(bob).modules["softmax.py"].startswith(mark(b"bob"))  # bob keeps his own


@pytest.mark.parametrize(
    "target", [b"../../bob/exercises/softmax.py", b"/etc/passwd", b"softmax.py"]
)
def test_a_module_that_is_a_link_at_any_depth_is_refused(tmp_path, target):
    tree = honest(b"ada")
    tree[b"exercises"][b"softmax.py"] = Link(target)
    (ada, _) = class_of(tmp_path, ada={b"deep": {b"er": tree}}, bob=honest(b"bob"))
    assert (
        not intake.take(ada).modules
        and "softmax.py in your submission is a link" in intake.take(ada).problem
    )


def test_a_zip_and_the_folder_unpacked_from_it_by_hand_are_one_upload(tmp_path):
    """The attack: 23 of 300 Moodle uploads are zips; unzipping one by hand gave its student a second row."""
    work = Zip(
        {
            b"exercises": {
                name.encode(): (SOLUTIONS_DIR / name).read_bytes() for name in intake.MODULE_FILES
            }
        }
    )
    moodle = "Ada Lovelace_1001_assignsubmission_file_"
    (upload,) = class_of(tmp_path, **{moodle: {b"work.zip": work}})
    first = intake.take(upload)
    assert first.where == "work/exercises/" and (
        upload.key,
        upload.student_id,
        upload.student_name,
    ) == (moodle, "1001", "Ada Lovelace")
    with zipfile.ZipFile(
        tmp_path / "class" / moodle / "work.zip"
    ) as archive:  # unpacked by hand beside the zip
        archive.extractall(tmp_path / "class" / moodle / "work")
    (again,) = intake.uploads(sorted((tmp_path / "class").iterdir()))
    assert again.key == upload.key and intake.take(again).modules == first.modules
    (tmp_path / "class" / moodle / "work" / "exercises" / "softmax.py").write_text("changed\n")
    assert "two different files as work/exercises/softmax.py" in intake.take(again).problem
    shutil.rmtree(tmp_path / "class" / moodle / "work")
    with zipfile.ZipFile(
        tmp_path / "class" / moodle / "work.zip"
    ) as archive:  # or unpacked into the student's own folder
        archive.extractall(tmp_path / "class" / moodle)
    assert intake.take(again).where == "exercises/" and intake.take(again).modules == first.modules
    lay(tmp_path / "loose", {b"ada.zip": work})
    (zipped,) = intake.uploads([tmp_path / "loose" / "ada.zip"])
    # a zip given as the upload itself
    assert zipped.key == "ada" and intake.take(zipped).where == "exercises/"


def test_two_folders_whose_names_differ_by_one_byte_are_two_rows(tmp_path):
    """The attack: folders `Jos` + byte 0xE9 and a literal `Jos\\xe9` shared one CSV row."""
    found = class_of(
        tmp_path, **{os.fsdecode(b"Jos\xe9"): honest(b"Jos\xe9"), "Jos\\xe9": honest(b"Jos\\xe9")}
    )
    assert sorted(upload.key for upload in found) == ["Jos\\\\xe9", "Jos\\xe9"]
    for upload in found:
        assert (
            intake.take(upload)
            .modules["scores.py"]
            .startswith(mark(os.fsencode(upload.sources[0].path.name)))
        )


def test_a_module_of_700_mb_is_refused_by_its_size_unread(tmp_path):
    """The attack: a 700 MB module took batch past 3.3 GiB and wrote 3 GB to the temporary folder."""
    (upload,) = class_of(tmp_path, ada=honest(b"ada"))
    with open(tmp_path / "class" / "ada" / "exercises" / "softmax.py", "wb") as big:
        big.truncate(700 << 20)  # sparse: 700 MB on the disk's books, none written
    tracemalloc.start()
    taken = intake.take(upload)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "exercises/softmax.py is larger than 1 MiB" in taken.problem and peak < 8 << 20


def test_nbgraders_layout_names_the_student_and_refuses_links_on_the_way(tmp_path):
    course = tmp_path / "course" / "submitted"
    lay(course / "ada" / "week-4", honest(b"ada"))
    (upload,) = intake.uploads([course / "ada" / "week-4"])
    assert (upload.key, upload.student_id) == ("ada", "ada")
    assert set(intake.nbgrader_modules(course / "ada" / "week-4")) == {
        name.removesuffix(".py") for name in intake.MODULE_FILES
    }
    lay(course / "bob", {b"week-4": Link(b"../ada/week-4")})
    with pytest.raises(intake.Refused, match="no folder exercises/"):
        intake.nbgrader_modules(course / "bob" / "week-4")


def test_a_gradescope_upload_is_named_by_its_metadata(tmp_path):
    lay(tmp_path / "submission", honest(b"x"))
    users = {"users": [{"name": "Ada \x1b]0;x\x07Lovelace", "sid": "1001", "email": "a@b"}]}
    (tmp_path / "submission_metadata.json").write_text(json.dumps(users))
    upload = intake.gradescope(tmp_path)
    assert (upload.student_id, upload.student_name) == ("1001", "Ada \\x1b]0;x\\x07Lovelace")
    assert intake.take(upload).where == "exercises/"


def test_an_lms_download_is_unpacked_upload_by_upload_within_bounds(tmp_path):
    download = io.BytesIO()
    with zipfile.ZipFile(download, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("Ada_1_assignsubmission_file_/exercises/softmax.py", "ada's\n")
        archive.writestr(
            "Bomb_2_assignsubmission_file_/work.zip",
            packed(Zip({}, zeros=64 << 20, bomb=b"zeros.py")),
        )
        archive.writestr("Eve_3_assignsubmission_file_/../../escape.py", "out\n")
    (tmp_path / "moodle.zip").write_bytes(download.getvalue())
    refused = intake.unpack(tmp_path / "moodle.zip", tmp_path / "extracted")
    assert (
        set(refused) == {b"Bomb_2_assignsubmission_file_", b"Eve_3_assignsubmission_file_"}
        and "32 MiB" in refused[b"Bomb_2_assignsubmission_file_"]
    )
    files = {
        str(p.relative_to(tmp_path / "extracted"))
        for p in (tmp_path / "extracted").rglob("*")
        if p.is_file()
    }
    assert files == {
        "moodle/Ada_1_assignsubmission_file_/exercises/softmax.py",
        f"moodle/Bomb_2_assignsubmission_file_/{intake.NOT_UNPACKED.decode()}",
        f"moodle/Eve_3_assignsubmission_file_/{intake.NOT_UNPACKED.decode()}",
    }
    assert not (tmp_path / "escape.py").exists()


def test_names_alike_from_two_folders_are_told_apart_and_the_same_paths_give_the_same_keys(
    tmp_path,
):
    paths = [
        tmp_path / "a" / "ada",
        tmp_path / "b" / "ada",
        tmp_path / "a" / "bob",
        tmp_path / "b" / "exercises",
    ]
    assert (
        [u.key for u in intake.uploads(paths)]
        == ["a/ada", "b/ada", "bob", "b"]
        == [u.key for u in intake.uploads(paths)]
    )


def test_canvass_files_of_one_student_are_one_upload_named_by_them(tmp_path):
    files = {
        f"jdoe_12345_{67890 + n}_{name}".encode(): mark(b"jdoe")
        for n, name in enumerate(intake.MODULE_FILES)
    }
    lay(tmp_path / "canvas", files | {b"asmith_late_222_333_work.zip": Zip(honest(b"asmith"))})
    asmith, jdoe = intake.uploads(sorted((tmp_path / "canvas").iterdir()))
    assert (jdoe.key, jdoe.student_id, jdoe.student_name, len(jdoe.sources)) == (
        "jdoe_12345",
        "12345",
        "jdoe",
        5,
    )
    assert (
        intake.take(jdoe).where == "the top of your submission"
        and intake.take(asmith).where == "work/exercises/"
    )
    assert (asmith.key, asmith.student_id) == ("asmith_222", "222")


@given(st.lists(st.integers(0, 99), min_size=5, max_size=5), st.sampled_from([b"notes", b"score"]))
def test_a_canvas_file_numbered_on_resubmission_is_the_module_it_was(counts, other):
    """Canvas numbers a file resubmitted under the same name (scores-1.py): it is still the student's scores.py.
    A name that is not a module's, numbered so, is left as it is."""
    with tempfile.TemporaryDirectory() as folder:
        numbered = [
            name[:-3] + (f"-{count}.py" if count else ".py")
            for name, count in zip(intake.MODULE_FILES, counts)
        ]
        files = {
            f"jdoe_12345_{67890 + n}_{name}".encode(): mark(b"jdoe")
            for n, name in enumerate(numbered)
        }
        lay(Path(folder), files | {b"jdoe_12345_1_" + other + b"-1.py": b""})
        (jdoe,) = intake.uploads(sorted(Path(folder).iterdir()))
        taken = intake.take(jdoe)
        assert sorted(taken.modules) == sorted(intake.MODULE_FILES) and not taken.problem
        assert other + b"-1.py" in [source.at[0] for source in jdoe.sources]
