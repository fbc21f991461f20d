"""The verdicts as JUnit XML, in the shape pytest's --junitxml writes, for CI dashboards."""

import re
import socket
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import UTC, datetime

from grader.check.results import CheckResult, Report

SUITE = "attention-by-hand"
# status -> child of <testcase>
OUTCOME = {"failed": "failure", "error": "error", "not_started": "skipped"}
# characters XML 1.0 cannot hold, even escaped; a student's message may contain them
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def junit_xml(report: Report) -> str:
    """The report as one <testsuite> with a <testcase> per check and the points as <properties>."""
    checks = [check for exercise in report.exercises for check in exercise.checks]
    counts = Counter(check.status for check in checks)
    root = ET.Element("testsuites")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=SUITE,
        tests=str(len(checks)),
        failures=str(counts["failed"]),
        errors=str(counts["error"]),
        skipped=str(counts["not_started"]),
        time=f"{sum(check.seconds for check in checks):.3f}",
        timestamp=datetime.now(UTC).isoformat(),
        hostname=socket.gethostname(),
    )
    suite.append(properties(report))
    suite.extend(testcase(check) for check in checks)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def properties(report: Report) -> ET.Element:
    """Each exercise's status and points, the total and the Hypothesis seed."""
    element = ET.Element("properties")
    values = [("seed", report.seed)]
    for exercise in report.exercises:
        values += [
            (f"{exercise.name}.status", exercise.status),
            (f"{exercise.name}.points", exercise.points),
        ]
        values.append((f"{exercise.name}.max_points", exercise.max_points))
    values += [("total.points", report.points), ("total.max_points", report.max_points)]
    for name, value in values:
        ET.SubElement(element, "property", name=name, value=str(value))
    return element


def testcase(check: CheckResult) -> ET.Element:
    """One check: classname the exercise, name the property; a child for anything but a pass."""
    exercise, _, name = check.id.partition(".")
    element = ET.Element("testcase", classname=exercise, name=name, time=f"{check.seconds:.3f}")
    if check.status in OUTCOME:
        message = xml_text(check.message)
        first = (
            "not started"
            if check.status == "not_started"
            else message.partition("\n")[0] or check.status
        )
        ET.SubElement(element, OUTCOME[check.status], message=first).text = message
    return element


def xml_text(text: str) -> str:
    """The text with each character XML cannot hold written as Python would escape it (\\x00, \\ud800)."""
    return NOT_XML.sub(lambda match: ascii(match.group())[1:-1], text)
