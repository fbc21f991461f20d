"""What batch does with each graded row: notes for the instructor, a late policy, overrides, the regrade log, the student's feedback."""

import datetime
import json
import os
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from grader import outlet
from grader.check.results import CheckResult, ExerciseResult, Report
from grader.course import late, overrides
from grader.course.answering import COPIED, NO_TIME, WEAKER, Answering, Asked
from grader.course.feedback import file_name
from grader.exercises import BY_NAME, NAMES
from grader.sandbox import intake

DUE = "2025-05-01T23:59:00+00:00"


def result_json(path: Path, copied: str = "", isolation: str = "namespaces") -> Path:
    """A check's JSON: every exercise passed but heads, which failed one check; copied's module the reference's."""
    exercises = []
    for name in NAMES:
        status = "failed" if name == "heads" else "passed"
        check = CheckResult(
            f"{name}.rule",
            status,
            "rows do not sum to 1" if status == "failed" else "",
            public=True,
        )
        points = 12.0 if name == "heads" else BY_NAME[name].points
        exercises.append(
            ExerciseResult(
                name,
                status,
                points,
                BY_NAME[name].points,
                [check],
                same_as_reference=name == copied,
            )
        )
    path.write_text(
        json.dumps(Report(exercises, seed=1, isolation=isolation).to_json()), encoding="utf-8"
    )
    return path


def graded_row(upload: intake.Upload, isolation: str = "namespaces") -> dict:
    cells = dict(zip(NAMES, ("15.0", "15.0", "20.0", "12.0", "30.0")))
    return {
        "student": upload.key,
        "status": "graded",
        "total": "92.0",
        "isolation": isolation,
        "reason": "heads failed",
    } | cells


def submitted(tmp_path: Path, student: str, when: str | None) -> intake.Upload:
    """nbgrader's submitted/STUDENT/attention-by-hand, with its timestamp.txt when given."""
    folder = tmp_path / "submitted" / student / "attention-by-hand"
    (folder / "exercises").mkdir(parents=True)
    if when:
        (folder / "timestamp.txt").write_text(when, encoding="utf-8")
    (made,) = intake.uploads([folder])
    return made


def answering(tmp_path: Path, rows=(), **asked) -> Answering:
    asked = Asked(**asked)
    assert asked.problem() == ""
    return Answering.start(tmp_path / "grades.csv", list(rows), 2, asked)


def test_late_work_loses_its_share_and_the_student_reads_why_in_the_feedback(tmp_path):
    care = answering(
        tmp_path, feedback=tmp_path / "feedback", late_policy="10%/day,max 3 days", due=DUE
    )
    on_time = submitted(tmp_path, "ada", "2025-05-01 23:00:00.000000 UTC")
    # 1 day 12 h late: two days begun
    later = submitted(tmp_path, "bo", "2025-05-03 11:59:00.000000 UTC")
    assert (
        care.graded(on_time, graded_row(on_time), result_json(tmp_path / "a.json"))["total"]
        == "92.0"
    )
    row = care.graded(later, graded_row(later), result_json(tmp_path / "b.json"))
    assert row["total"] == "73.5" and row["reason"].startswith(
        "submitted 1 day 12 h late: 20% of the points taken off (10%/day,max 3 days)"
    )
    text = (tmp_path / "feedback" / "bo.txt").read_text(encoding="utf-8")
    assert (
        "heads" in text
        and "rows do not sum to 1" in text
        and "Points: 73.5 of 100." in text
        and "1 day 12 h late" in text
    )
    assert "--submission" not in text and "byte for byte" not in text


def test_no_time_no_penalty_and_the_instructor_is_told(tmp_path):
    care = answering(tmp_path, late_policy="10%/day", due=DUE)
    upload = submitted(tmp_path, "cy", None)
    assert care.graded(upload, graded_row(upload), None)["total"] == "92.0"
    assert care.progress.notes[NO_TIME] == [""] and f"{NO_TIME} (1)." in care.progress.summary()


def test_a_copy_of_the_reference_and_a_weak_confinement_are_gathered_for_the_instructor_only(
    tmp_path,
):
    care = answering(tmp_path, feedback=tmp_path / "feedback")
    upload = submitted(tmp_path, "dee", None)
    care.graded(
        upload,
        graded_row(upload, isolation="none"),
        result_json(tmp_path / "d.json", copied="softmax", isolation="none"),
    )
    assert care.progress.notes[COPIED] == ["dee: softmax.py"] and care.progress.notes[WEAKER][
        0
    ].startswith("dee: none")
    assert "byte for byte" not in (tmp_path / "feedback" / "dee.txt").read_text(encoding="utf-8")


def test_a_regrade_is_logged_and_an_override_survives_it(tmp_path):
    upload = submitted(tmp_path, "eve", None)
    old = graded_row(upload) | {"scores.py sha256": "old"}
    overrides.record(overrides.log_of(tmp_path / "grades.csv"), {"kind": "override", "student": "eve", "exercise": "heads"}
                     | {"points": "20.0", "before": "12.0", "why": "plot checked by hand", "who": "prof"})  # fmt: skip
    care = answering(tmp_path, rows=[old], feedback=tmp_path / "feedback")
    row = care.graded(
        upload, graded_row(upload) | {"scores.py sha256": "new"}, result_json(tmp_path / "e.json")
    )
    assert (row["heads"], row["total"]) == ("20.0", "100.0")
    entries = overrides.read(overrides.log_of(tmp_path / "grades.csv"))
    assert (
        entries[-1]["kind"] == "regrade"
        and entries[-1]["why"] == "the files changed since the last grading"
    )
    assert (
        entries[-1]["before"] == "92.0" and entries[-1]["points"] == "100.0" and entries[-1]["who"]
    )
    assert "heads set to 20.0 by prof" in (tmp_path / "feedback" / "eve.txt").read_text(
        encoding="utf-8"
    )


def test_an_upload_not_taken_gets_its_reason_as_feedback(tmp_path):
    care = answering(tmp_path, feedback=tmp_path / "feedback")
    folder = tmp_path / "fay"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    (upload,) = intake.uploads([folder])
    from grader.course import rows

    row = care.graded(upload, rows.refused(intake.take(upload)), None)
    text = (tmp_path / "feedback" / "fay.txt").read_text(encoding="utf-8")
    assert (
        row["total"] == "0.0"
        and "not graded: No module of the exercise" in text
        and "Points: 0.0 of 100." in text
    )


@pytest.mark.parametrize(
    "asked, words",
    [
        ({"late_policy": "10 percent"}, "--late-policy: cannot read the late policy"),
        ({"late_policy": "10%/day"}, "--late-policy needs --due"),
        ({"late_policy": "10%/day", "due": "next friday"}, "--due 'next friday'"),
        ({"feedback": Path("/no/such/folder/feedback")}, "does not exist"),
    ],
)
def test_options_that_cannot_be_followed_say_what_to_write(asked, words):
    assert words in Asked(**asked).problem()


@given(
    st.floats(1, 100),
    st.sampled_from(["day", "hour"]),
    st.integers(1, 10),
    st.floats(-1e6, 1e7),
    st.floats(0, 1e7),
)
# found by Hypothesis: a denormal second late once rounded to no day late
@example(1.0, "day", 1, 5e-324, 0.0)
def test_the_penalty_grows_with_lateness_from_nothing_to_everything(
    percent, unit, most, seconds, more
):
    policy = late.parse(f"{percent}%/{unit},max {most} {unit}s")
    taken, later = policy.fraction(seconds), policy.fraction(seconds + more)
    assert 0 <= taken <= later <= 1
    assert (taken == 0) == (seconds <= 0) and (seconds > most * late.UNITS[unit]) <= (taken == 1)


def test_gradescope_s_metadata_gives_the_times_the_student_s_own_due_date_first(tmp_path):
    metadata = {
        "created_at": "2018-07-01T14:22:32.365935-07:00",
        "assignment": {"due_date": "2018-06-30T23:00:00.000000-07:00"},
    }
    (tmp_path / "submission_metadata.json").write_text(
        json.dumps(metadata | {"users": [{"id": 1, "name": "A"}]})
    )
    submitted_at, due = late.gradescope_times(tmp_path)
    assert late.late_by(submitted_at, due) == pytest.approx(15 * 3600 + 22 * 60 + 32.365935)
    own = {"due_date": "2018-07-02T23:00:00-07:00"}
    (tmp_path / "submission_metadata.json").write_text(
        json.dumps(metadata | {"users": [{"id": 1, "assignment": own}]})
    )
    assert late.late_by(*late.gradescope_times(tmp_path)) < 0
    assert late.gradescope_times(tmp_path / "nowhere") == (None, None)


NAMES_BYTES = st.binary(min_size=1, max_size=300).filter(lambda b: b not in (b".", b".."))


@given(st.lists(NAMES_BYTES, min_size=2, max_size=5, unique=True))
def test_feedback_files_are_one_per_student_and_never_leave_their_folder(raw):
    keys = [
        outlet.name(b"/".join(part for part in name.split(b"/") if part) or b"x") for name in raw
    ]
    names = [file_name(key) for key in keys]
    assert all(
        len(n.encode("utf-8")) <= 255 and "/" not in n and not n.startswith(".") and os.sep not in n
        for n in names
    )
    assert len(set(names)) == len(set(keys))


def test_the_moment_reads_nbgrader_s_and_gradescope_s_times():
    utc = datetime.UTC
    assert late.moment("2025-05-01 10:00:00.000000 UTC") == datetime.datetime(
        2025, 5, 1, 10, tzinfo=utc
    )
    assert late.moment("2025-05-01T12:00:00+02:00") == datetime.datetime(2025, 5, 1, 10, tzinfo=utc)
    assert late.moment("yesterday") is None
