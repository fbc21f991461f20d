"""`grader check --junit`: pytest's JUnit XML shape, one testcase per check, the same verdicts as --json."""

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.check.junit import junit_xml
from grader.check.results import CheckResult, ExerciseResult, Report
from grader.cli import main
from grader.exercises import NAMES
from grader.paths import SOLUTIONS_DIR

OUTCOME = {"failed": "failure", "error": "error", "not_started": "skipped"}
TIME = re.compile(r"[0-9]+(\.[0-9]{1,3})?")  # the XSD's SUREFIRE_TIME, as pytest writes it


def run(tmp_path: Path, *args: str) -> tuple[int, dict, ET.Element]:
    """`grader check ARGS --json --junit`: exit status, the JSON and the parsed XML."""
    json_file, junit_file = tmp_path / "result.json", tmp_path / "result.xml"
    result = CliRunner().invoke(
        main, ["check", *args, "--json", str(json_file), "--junit", str(junit_file)]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    root = ET.parse(junit_file).getroot()
    assert_junit_shape(root)
    return result.exit_code, json.loads(json_file.read_text()), root


def assert_junit_shape(root: ET.Element) -> None:
    """The shape of the JUnit XSD pytest is tested against (junit-10.xsd), for the parts the grader writes."""
    assert root.tag == "testsuites" and [child.tag for child in root] == ["testsuite"]
    suite = root[0]
    assert {"name", "tests", "failures", "errors", "skipped", "time"} <= set(suite.attrib)
    assert all(suite.get(key).isdigit() for key in ("tests", "failures", "errors", "skipped"))
    assert TIME.fullmatch(suite.get("time"))
    tags = [child.tag for child in suite]
    assert tags == ["properties"] + ["testcase"] * (len(tags) - 1)
    assert all(p.tag == "property" and set(p.attrib) == {"name", "value"} for p in suite[0])
    for case in suite.iter("testcase"):
        assert set(case.attrib) == {"classname", "name", "time"} and TIME.fullmatch(
            case.get("time")
        )
        assert len(case) <= 1 and all(
            child.tag in OUTCOME.values() and "message" in child.attrib for child in case
        )
    assert int(suite.get("tests")) == len(tags) - 1
    for count, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        assert int(suite.get(count)) == len(suite.findall(f"testcase/{tag}"))


def assert_same_verdicts(data: dict, root: ET.Element) -> None:
    """Each check of the JSON is a testcase, in order, with its status and message; the points are properties."""
    checks = [check for exercise in data["exercises"] for check in exercise["checks"]]
    cases = list(root.iter("testcase"))
    assert [f"{case.get('classname')}.{case.get('name')}" for case in cases] == [
        check["id"] for check in checks
    ]
    for check, case in zip(checks, cases):
        if check["status"] == "passed":
            assert len(case) == 0, check["id"]
            continue
        (child,) = case
        assert child.tag == OUTCOME[check["status"]] and child.text == check["message"], check["id"]
        first = (
            "not started" if check["status"] == "not_started" else check["message"].splitlines()[0]
        )
        assert child.get("message") == first
    values = {p.get("name"): p.get("value") for p in root.iter("property")}
    for exercise in data["exercises"]:
        assert float(values[f"{exercise['name']}.points"]) == exercise["points"]
        assert float(values[f"{exercise['name']}.max_points"]) == exercise["max_points"]
        assert values[f"{exercise['name']}.status"] == exercise["status"]
    assert float(values["total.points"]) == data["total"]["points"]
    assert float(values["total.max_points"]) == data["total"]["max_points"]


@pytest.mark.slow
def test_reference_solutions_pass_every_testcase(tmp_path):
    status, data, root = run(tmp_path, "--solutions")
    assert status == 0
    assert_same_verdicts(data, root)
    suite = root[0]
    assert suite.get("name") == "attention-by-hand" and int(suite.get("tests")) > len(NAMES)
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "0")
    assert float(suite.get("time")) > 0


@pytest.mark.slow
def test_stubs_are_skipped_not_failed(tmp_path, submission):
    status, data, root = run(tmp_path, "--submission", str(submission))
    assert status == 1
    assert_same_verdicts(data, root)
    suite = root[0]
    assert suite.get("skipped") == suite.get("tests") and (
        suite.get("failures"),
        suite.get("errors"),
    ) == ("0", "0")
    assert all(
        case[0].text.endswith("still raises NotImplementedError.")
        for case in suite.iter("testcase")
    )


@pytest.mark.slow
def test_one_wrong_function_fails_only_its_own_checks(tmp_path):
    folder = tmp_path / "wrong_softmax"
    shutil.copytree(SOLUTIONS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "softmax.py").write_text("def softmax(x):\n    return x\n")
    status, data, root = run(tmp_path, "--submission", str(folder))
    assert status == 1
    assert_same_verdicts(data, root)
    failing = {case.get("classname") for case in root.iter("testcase") if len(case)}
    assert (
        failing == {"softmax"} and int(root[0].get("failures")) > 0 and root[0].get("errors") == "0"
    )


def test_messages_with_characters_xml_cannot_hold_still_parse():
    checks = [
        CheckResult(
            "softmax.rows_sum_to_one", "failed", "bad \x1b[31mred\x00\nsecond line", seconds=0.25
        ),
        CheckResult("softmax.no_warning", "error", "crashed: \ud800"),
    ]
    report = Report([ExerciseResult("softmax", "failed", 0.0, 20.0, checks)], seed=1)
    root = ET.fromstring(junit_xml(report).encode("utf-8"))
    assert_junit_shape(root)
    failure, error = root.find("testsuite/testcase/failure"), root.find("testsuite/testcase/error")
    assert failure.get("message") == "bad \\x1b[31mred\\x00" and failure.text.endswith(
        "\nsecond line"
    )
    assert error.text == "crashed: \\ud800" and root[0].get("time") == "0.250"


@pytest.mark.slow
def test_an_unwritable_junit_path_is_a_clear_exit_2(tmp_path):
    target = tmp_path / "no_such_folder" / "result.xml"
    result = CliRunner().invoke(main, ["check", "scores", "--solutions", "--junit", str(target)])
    assert result.exit_code == 2 and not target.exists()
    assert f"Cannot write {target}: No such file or directory" in result.output
