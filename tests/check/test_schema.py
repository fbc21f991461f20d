"""The JSON that scripts read, held against the schemas the kit ships (grader/check/check.schema.json, grader/compare/compare.schema.json)."""

import json

import jsonschema
import pytest

from grader.check.results import CheckResult, ExerciseResult, Report
from grader.check.runner import run_checks
from grader.compare import command as comparison
from grader.paths import GRADER_DIR, SOLUTIONS_DIR

CHECK = json.loads((GRADER_DIR / "check" / "check.schema.json").read_text(encoding="utf-8"))
COMPARE = json.loads((GRADER_DIR / "compare" / "compare.schema.json").read_text(encoding="utf-8"))


def valid(data: dict, schema: dict) -> None:
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def test_the_schemas_are_schemas():
    for schema in (CHECK, COMPARE):
        jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.slow
def test_stubs_give_a_report_of_the_schema(submission):
    valid(run_checks(submission, ["scores", "masking"]).to_json(), CHECK)


@pytest.mark.slow
def test_the_reference_gives_a_report_of_the_schema():
    valid(run_checks(SOLUTIONS_DIR).to_json(), CHECK)


def test_a_report_off_the_schema_is_refused():
    wrong = Report(
        [ExerciseResult("scores", "fine", 1.0, 15.0, [CheckResult("scores.x", "passed")])], seed=0
    ).to_json()
    with pytest.raises(jsonschema.ValidationError, match="fine"):
        valid(wrong, CHECK)


@pytest.mark.slow
def test_compare_writes_the_json_of_its_schema(tmp_path):
    path = tmp_path / "compare.json"
    assert (
        comparison.compare(
            solutions=True, seed=1, json_file=path, steps={"mlp": 3, "attention": 2}, samples=5
        )
        == 0
    )
    valid(json.loads(path.read_text(encoding="utf-8")), COMPARE)
