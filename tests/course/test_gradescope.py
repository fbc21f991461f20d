"""`grader gradescope`: the autograder zip, and run_autograder grading submissions in a folder laid out like /autograder."""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import psutil
import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.course import gradescope
from grader.course import gradescope_results as gs
from grader.exercises import EXERCISES
from grader.paths import KIT_ROOT, SOLUTIONS_DIR

SCHEMA = json.loads((KIT_ROOT / "grader" / "course" / "gradescope_results.schema.json").read_text())
MODULES = [f"{exercise.name}.py" for exercise in EXERCISES]
WRONG_SOFTMAX = "def softmax(x):\n    return x\n"
HOSTILE_SOFTMAX = '''\
"""A stub softmax that, when imported, forges the results and leaves two processes to forge them again."""
import json, os, subprocess, sys
from pathlib import Path

# the worker's environment does not carry the variable: fall back to the path the test gives
RESULTS = Path(os.environ.get("ATTENTION_BY_HAND_AUTOGRADER_ROOT", {root!r})) / "results" / "results.json"
FORGED = json.dumps({{"score": 100.0, "output": "forged", "tests": []}})
RESULTS.parent.mkdir(parents=True, exist_ok=True)
RESULTS.write_text(FORGED)
(RESULTS.parent.parent / "witness").write_text("the import ran")
LATER = f"""
import pathlib, time
results = pathlib.Path({{str(RESULTS)!r}})
for _ in range(400):  # 20 s: once honest results appear, put the forged ones back
    time.sleep(0.05)
    if results.exists() and "forged" not in results.read_text():
        results.write_text({{FORGED!r}})
"""
for env in (os.environ, {{}}):  # the second carries neither the worker's token nor the run's marker
    later = subprocess.Popen([sys.executable, "-c", LATER], start_new_session=True, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(RESULTS.parent.parent / "pids", "a") as f:
        f.write(f"{{later.pid}}\\n")


def softmax(x):
    raise NotImplementedError
'''


@pytest.fixture(scope="module")
def kit_zip(tmp_path_factory) -> Path:
    """The autograder zip, built once."""
    out = tmp_path_factory.mktemp("zip") / "autograder.zip"
    assert gradescope.export(out) == 0
    return out


@pytest.fixture
def root(tmp_path, kit_zip) -> Path:
    """A folder laid out like Gradescope's /autograder: the zip in source/, an empty submission/ and results/."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(kit_zip) as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():  # as unzip does: the modes in the zip
            os.chmod(root / "source" / info.filename, (info.external_attr >> 16) & 0o777)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return root


def submit(root: Path, folder: str = "", base: Path = SOLUTIONS_DIR, **modules: str) -> Path:
    """The five modules of base in submission/FOLDER, some replaced by the given source."""
    target = root / "submission" / folder
    target.mkdir(parents=True, exist_ok=True)
    for name in MODULES:
        shutil.copy(base / name, target / name)
    for name, source in modules.items():
        (target / f"{name}.py").write_text(source)
    return target


def run_autograder(root: Path, python: str = sys.executable) -> dict:
    """Run the zip's run_autograder as Gradescope does (cwd /autograder), with this venv's Python; the results."""
    return autograde(root, python)[0]


def autograde(root: Path, python: str = sys.executable) -> tuple[dict, str]:
    """Run the zip's run_autograder as Gradescope does; the results and its output, which Gradescope shows instructors only."""
    env = {**os.environ, gradescope.ROOT_VAR: str(root), "ATTENTION_BY_HAND_PYTHON": python}
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # so the kit that ran leaves its bytecode behind
    command = [str(root / "source" / "run_autograder")]
    done = subprocess.run(
        command, check=False, cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return results(root), done.stdout


def results(root: Path) -> dict:
    """results.json, checked against the schema written from Gradescope's specification."""
    data = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    return data


def assert_graded(data: dict, hidden: str = "after_published") -> None:
    """One visible test per exercise, in lesson order, with its points, then the hidden checks' as the course chose; the score is their total."""
    exercises, last = data["tests"][:-1], data["tests"][-1]
    assert [t["name"] for t in exercises] == [
        f"{n}. {e.name}: {e.title}" for n, e in enumerate(EXERCISES, 1)
    ]
    assert [t["max_score"] for t in exercises] == [e.points for e in EXERCISES]
    assert all(t["visibility"] == "visible" for t in exercises)
    assert (last["name"], last["max_score"], last["visibility"]) == (gs.HIDDEN_TEST, 0.0, hidden)
    hidden_ids = re.findall(r"^(\w+\.\w+)(?:, \w+\.\w+)*: ", last["output"], flags=re.M)
    # no visible test names a hidden check
    assert not [i for i in hidden_ids for t in exercises if i in t["output"]]
    assert data["score"] == sum(t["score"] for t in data["tests"])


def test_the_zip_holds_the_two_scripts_and_the_kit_only(kit_zip, tmp_path):
    with zipfile.ZipFile(kit_zip) as archive:
        infos = {info.filename: info for info in archive.infolist()}
        scripts = {name: archive.read(name) for name in ("setup.sh", "run_autograder")}
    names = set(infos)
    expected = [
        "grader/cli.py",
        "grader/check/checks/hidden/test_softmax.py",
        "grader/check/checks/public/test_softmax.py",
        "grader/course/gradescope_results.schema.json",
    ]
    assert (
        set(expected + ["exercises/softmax.py", "solutions/softmax.py", "data/train.txt"]) <= names
    )
    top = {
        "setup.sh",
        "run_autograder",
        gradescope.SETTINGS,
        "pyproject.toml",
        "README.md",
        "grader",
        "exercises",
        "solutions",
        "data",
    }
    assert {name.split("/")[0] for name in names} == top
    assert not [
        n
        for n in names
        if {"__pycache__", ".grader", ".git", "tests", ".venv"} & set(n.split("/"))
        or n.endswith(".pyc")
    ]
    for name, info in infos.items():
        mode = info.external_attr >> 16
        assert stat.S_ISREG(mode) and stat.S_IMODE(mode) == (0o755 if name in scripts else 0o644), (
            name
        )
    assert scripts["setup.sh"] == (KIT_ROOT / "grader/course/gradescope_setup.sh").read_bytes()
    for script in scripts.values():
        subprocess.run(["bash", "-n"], input=script, check=True)
    again = tmp_path / "again.zip"
    assert gradescope.export(again) == 0 and again.read_bytes() == kit_zip.read_bytes()


def test_the_command_refuses_to_replace_a_zip_without_force(tmp_path):
    out = tmp_path / "autograder.zip"
    out.write_text("an older zip")
    refused = CliRunner().invoke(main, ["gradescope", str(out)])
    assert (
        refused.exit_code == 1 and "--force" in refused.output and out.read_text() == "an older zip"
    )
    forced = CliRunner().invoke(main, ["gradescope", str(out), "--force"])
    assert forced.exit_code == 0 and zipfile.is_zipfile(out)
    nowhere = CliRunner().invoke(main, ["gradescope", str(tmp_path / "nowhere" / "a.zip")])
    assert nowhere.exit_code == 2 and "does not exist" in nowhere.output


@pytest.mark.slow
def test_a_correct_submission_gets_every_point(root):
    submit(root)
    data, instructors_only = autograde(root)
    assert_graded(data)
    # what the student sees (extra_data is not shown)
    seen = [data["output"]] + [t["output"] for t in data["tests"]]
    assert not [text for text in seen if "byte for byte" in text or "instructor:" in text.lower()]
    assert "byte for byte the kit's reference solution" in instructors_only
    assert data["score"] == 100.0 and all(t["output"].startswith("All ") for t in data["tests"])
    assert data["extra_data"]["graded_folder"] == "the top of your submission"
    assert sorted(data["extra_data"]["submitted_sha256"]) == sorted(MODULES)
    assert (
        root / "source" / "grader" / "course" / "__pycache__"
    ).is_dir()  # the zip's kit did the grading


@pytest.mark.slow
def test_a_wrong_softmax_costs_softmax_points_only(root):
    submit(root, "exercises", softmax=WRONG_SOFTMAX)
    data = run_autograder(root)
    assert_graded(data)
    by_name = {t["name"].split(":")[0]: t for t in data["tests"]}
    softmax, hidden = by_name["3. softmax"], data["tests"][-1]
    assert softmax["score"] < 20.0 and "softmax.matches_reference" not in softmax["output"]
    assert (
        "hidden checks do not pass" in softmax["output"]
        and "softmax.matches_reference: failed" in hidden["output"]
    )
    assert "expected:" in hidden["output"] and "got:" in hidden["output"]
    assert all(t["score"] == t["max_score"] for name, t in by_name.items() if name != "3. softmax")
    assert data["score"] == 80.0 + softmax["score"] and "exercises/" in data["output"]


@pytest.mark.slow
def test_the_stubs_get_nothing_and_are_not_started(root, pristine):
    submit(root, "exercises", base=pristine)
    data = run_autograder(root)
    assert_graded(data)
    assert data["score"] == 0.0
    assert all(
        "not started" in t["output"] and "NotImplementedError" in t["output"] for t in data["tests"]
    )


@pytest.mark.slow
def test_a_folder_zipped_with_its_parents_is_found(root):
    folder = submit(root, "my upload/attention-by-hand/exercises", softmax=WRONG_SOFTMAX)
    (folder.parent / "README.md").write_text("notes")
    (root / "submission" / "__MACOSX" / "exercises").mkdir(parents=True)
    for name in MODULES:  # a Mac's zip keeps copies of the five names in __MACOSX
        (root / "submission" / "__MACOSX" / "exercises" / name).write_text("")
    data = run_autograder(root)
    assert_graded(data)
    assert data["extra_data"]["graded_folder"] == "my upload/attention-by-hand/exercises/"
    assert 80.0 <= data["score"] < 100.0


def test_a_missing_module_is_named_with_the_files_found(root, capsys):
    folder = submit(root, "exercises")
    (folder / "training.py").unlink()
    assert gradescope.autograde(root) == 0
    data = results(root)
    assert data["score"] == 0.0 and all(t["score"] == 0.0 for t in data["tests"])
    assert (
        "In exercises/: heads.py, masking.py, scores.py, softmax.py; missing training.py."
        in data["output"]
    )
    assert "Upload your five files" in data["output"]


def test_two_copies_or_none_are_refused_with_what_to_upload(root):
    submit(root)
    submit(root, "exercises")
    gradescope.autograde(root)
    data = results(root)
    assert data["score"] == 0.0
    assert (
        "in 2 places: the top of your submission; exercises/" in data["output"]
        and "Upload your five files" in data["output"]
    )
    shutil.rmtree(root / "submission")
    (root / "submission").mkdir()
    (root / "submission" / "attention.ipynb").write_text("{}")
    gradescope.autograde(root)
    assert (
        "No module of the exercise is in your submission. It holds: attention.ipynb."
        in results(root)["output"]
    )


def test_a_module_linked_to_the_reference_is_refused(root, pristine):
    folder = submit(root, base=pristine)
    (folder / "softmax.py").unlink()
    (folder / "softmax.py").symlink_to(root / "source" / "solutions" / "softmax.py")
    gradescope.autograde(root)
    data = results(root)
    assert data["score"] == 0.0 and "softmax.py in your submission is a link" in data["output"]


@pytest.mark.slow
def test_a_softmax_that_forges_the_results_gets_the_honest_score(root, pristine):
    submit(root, base=pristine, softmax=HOSTILE_SOFTMAX.format(root=str(root)))
    started = time.time()
    run_autograder(root)
    time.sleep(1.0)  # what it left running would put the forged results back within 0.05 s
    data = results(root)
    assert_graded(data)
    assert data["score"] == 0.0 and data["output"] != "forged"
    if (
        data["extra_data"]["isolation"] == "none"
    ):  # unconfined, the forgery runs, and only the kill sweep stops it
        pids = [int(pid) for pid in (root / "pids").read_text().split()]
        assert len(pids) >= 2 and not [pid for pid in pids if alive(pid)]
    else:  # confined, it cannot even write its witness outside its own sandbox
        assert not (root / "witness").exists() and not (root / "pids").exists()
        assert [
            p.pid
            for p in psutil.process_iter(["create_time"])
            if p.info["create_time"] >= started and "results.json" in " ".join(cmdline(p))
        ] == []


def cmdline(process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie does not)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status[status.rindex(")") + 2] != "Z"


def test_a_grader_that_stops_without_a_result_is_the_autograders_fault(root, monkeypatch):
    submit(root)
    monkeypatch.setattr(
        gradescope,
        "check_once",
        lambda folder, result, timeout: (1, "Traceback ...\nKeyError: 'x'\n", False),
    )
    gradescope.autograde(root)
    data = results(root)
    assert (
        data["score"] == 0.0
        and "exit status 1" in data["output"]
        and "fault of the autograder" in data["output"]
    )
    monkeypatch.setattr(gradescope, "check_once", lambda folder, result, timeout: (-9, "", True))
    gradescope.autograde(root, timeout=5)
    assert "took longer than 5 s" in results(root)["output"]


def test_run_autograder_writes_results_even_when_python_cannot_start(root):
    submit(root)
    data = run_autograder(root, python=str(root / "no-such-python"))
    assert data["score"] == 0.0 and "fault of the autograder" in data["output"]


def test_what_the_check_json_says_about_the_run_goes_to_extra_data():
    exercises = [
        {
            "name": e.name,
            "status": "passed",
            "points": e.points,
            "max_points": e.points,
            "sha256": {f"{e.name}.py": "ab" * 32},
            "checks": [{"id": f"{e.name}.a", "status": "passed", "message": ""}],
        }
        for e in EXERCISES
    ]
    check = {
        "total": {"points": 100.0, "max_points": 100.0},
        "exercises": exercises,
        "checks": "all",
        "isolation": "namespaces",
    }
    data = gradescope.gs.graded(check, "exercises/", {"graded_folder": "exercises/"}, seconds=2.4)
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert data["extra_data"]["isolation"] == "namespaces" and data["extra_data"]["checks"] == "all"
    assert (
        data["extra_data"]["sha256"]["softmax"] == {"softmax.py": "ab" * 32}
        and data["execution_time"] == 2
    )


@pytest.mark.parametrize(
    "document, valid",
    [
        ({"score": 1.0}, True),
        ({"tests": [{"score": 1.0, "max_score": 2.0, "name": "a"}]}, True),
        ({"output": "a score is missing"}, False),
        ({"tests": [{"name": "and here too"}]}, False),
        ({"score": 1.0, "tests": [{"score": 1.0, "visibility": "sometimes"}]}, False),
        ({"score": 1.0, "output_format": "latex"}, False),
        ({"score": 1.0, "scores": 2.0}, False),
    ],
)
def test_the_schema_follows_gradescopes_specification(document, valid):
    assert jsonschema.Draft202012Validator(SCHEMA).is_valid(document) == valid


@pytest.mark.slow
@pytest.mark.parametrize("hidden", ["hidden", "after_due_date"])
def test_the_zip_sets_when_students_see_the_hidden_checks(root, tmp_path, hidden):
    out = tmp_path / "chosen.zip"
    assert CliRunner().invoke(main, ["gradescope", str(out), "--hidden", hidden]).exit_code == 0
    with zipfile.ZipFile(out) as archive:
        (root / "source" / gradescope.SETTINGS).write_bytes(archive.read(gradescope.SETTINGS))
    submit(root, "exercises", softmax=WRONG_SOFTMAX)
    data = run_autograder(root)
    assert_graded(data, hidden)


def test_an_unknown_visibility_is_refused(tmp_path):
    refused = CliRunner().invoke(
        main, ["gradescope", str(tmp_path / "a.zip"), "--hidden", "sometimes"]
    )
    assert (
        refused.exit_code == 2
        and "after_published" in refused.output
        and not (tmp_path / "a.zip").exists()
    )


@pytest.mark.slow
def test_all_or_nothing_from_the_zip_is_honoured(root):
    (root / "source" / gradescope.SETTINGS).write_text(
        json.dumps({"all_or_nothing": True, "hidden": "after_published"})
    )
    submit(root, "exercises", softmax=WRONG_SOFTMAX)
    data = run_autograder(root)
    assert_graded(data)
    by_name = {t["name"].split(":")[0]: t for t in data["tests"]}
    assert by_name["3. softmax"]["score"] == 0.0 and data["score"] == 80.0


@pytest.mark.slow
def test_a_late_policy_from_the_zip_takes_its_share_by_gradescope_s_times(root):
    (root / "source" / gradescope.SETTINGS).write_text(
        json.dumps({"late_policy": "10%/day,max 3 days"})
    )
    metadata = {
        "created_at": "2025-05-03T11:59:00+00:00",
        "assignment": {"due_date": "2025-05-01T23:59:00+00:00"},
        "users": [],
    }
    (root / "submission_metadata.json").write_text(json.dumps(metadata))
    submit(root)
    data = run_autograder(root)
    # the exercises' points, then the penalty
    assert data["score"] == 80.0 and sum(t["score"] for t in data["tests"]) == 100.0
    assert data["output"].startswith(
        "Submitted 1 day 12 h late: 20% of the points taken off (10%/day,max 3 days).\n"
    )


def test_a_late_policy_gradescope_cannot_time_is_said_and_takes_nothing(tmp_path):
    results = gs.not_graded("x", {}, 1.0) | {"score": 50.0}
    said = gradescope.late_results(results, tmp_path, "10%/day")
    assert said["score"] == 50.0 and said["output"].startswith(
        "Gradescope gave no submission time or due date"
    )
    assert gradescope.late_results(results, tmp_path, "") == results
