"""The mutation report: it knows every mutant of the reference, lists no survivor, and says why each equivalent is right.

The quick tests read the committed report; the slow ones grade every mutant again (verdicts kept in
the user's cache folder) and run each equivalent beside the reference.
"""

import json

import equivalent
import mutants
import operators
import pytest
import report

REPORT = json.loads(report.JSON.read_text(encoding="utf-8"))
AGAIN = "run `python tests/mutation/report.py` and commit report.json and REPORT.md"


def test_the_report_knows_every_mutant():
    """The report was made from this reference and these operators: the mutant set generated now is the report's."""
    assert REPORT["mutant_set"] == report.mutant_set_hash(), (
        f"the reference or the mutation operators changed: {AGAIN}"
    )


def test_no_mutant_survives():
    """Every mutant in the report fails its own exercise's checks or is equivalent."""
    survivors = [m["id"] for m in REPORT["mutants"] if m["verdict"] not in ("killed", "equivalent")]
    assert survivors == [] and "survived" not in REPORT["counts"]


def test_every_equivalent_is_listed_with_its_reason():
    """The report's equivalents are exactly those equivalent.py explains, each with a reason."""
    listed = {m["id"]: m["reason"] for m in REPORT["mutants"] if m["verdict"] == "equivalent"}
    assert set(listed) == set(equivalent.EQUIVALENT)
    assert all(
        reason == equivalent.EQUIVALENT[name].reason and len(reason) > 40
        for name, reason in listed.items()
    )


def test_each_killed_mutant_names_the_checks_that_failed():
    killed = [m for m in REPORT["mutants"] if m["verdict"] == "killed"]
    assert killed and all(
        m["failed"] and all(c.startswith(m["module"] + ".") for c in m["failed"]) for m in killed
    )


@pytest.mark.parametrize(
    "operator, before, after",
    [
        (
            "DictPositional",
            "def f(a, b):\n    for k in a:\n        a[k] = b[k]\n",
            "a[k] = list(b.values())[list(a).index(k)]",
        ),
        ("ContainerEmptied", "def f(heads):\n    return 1\n", "    heads.clear()\n    return 1"),
        (
            "ContainerReordered",
            "def f(heads):\n    return 1\n",
            "    heads.reverse()\n    return 1",
        ),
        (
            "MutableDefault",
            "def f(x):\n    outs, shares = [], []\n    return outs\n",
            "def f(x, outs=[], shares=[]):\n    return outs",
        ),
        (
            "KeepdimsDropped",
            "def f(x):\n    return np.max(x, axis=-1, keepdims=True)\n",
            "np.max(x, axis=-1)",
        ),
        ("TForSwapaxes", "def f(k):\n    return np.swapaxes(k, -1, -2)\n", "return k.T"),
        ("InPlaceForCopy", "def f(x, t):\n    return x - t\n", "np.subtract(x, t, out=x)"),
        (
            "MinusInfClipped",
            'def softmax(x):\n    """Doc."""\n    return x\n',
            "    x = np.where(np.isneginf(x), -1e9, x)\n    return x",
        ),
        ("EpsilonAdded", "def f(e, s):\n    return e / s\n", "e / (s + 1e-9)"),
    ],
)
def test_an_operator_makes_its_mutant(operator, before, after):
    """Each of this domain's operators changes the code as it says."""
    source = operators.Source(before)
    made = [source.apply(edits) for edits in operators.OPERATORS[operator](source)]
    assert any(after in text for text in made), made


@pytest.mark.slow
def test_the_mutant_set_is_the_report_s():
    """Generating the mutants again gives the report's, one for one (the same ids and sources)."""
    assert [(m.id, m.sha) for m in mutants.every_mutant()] == [
        (m["id"], m["sha"]) for m in REPORT["mutants"]
    ], AGAIN


@pytest.mark.slow
def test_each_equivalent_agrees_with_the_reference():
    """Each equivalent mutant, run beside the reference on the stated inputs (each twice), returns and leaves the same."""
    every = {m.id: m for m in mutants.every_mutant()}
    assert {name: equivalent.run(every[name]) for name in equivalent.EQUIVALENT} == dict.fromkeys(
        equivalent.EQUIVALENT, []
    )


@pytest.mark.slow
@pytest.mark.thorough
def test_every_mutant_fails_its_checks_or_is_equivalent():
    """The thorough run: every mutant graded again by its exercise's checks; the verdicts are the report's, and none survives.

    Verdicts of unchanged mutants under unchanged checks come from the cache; a full run takes the
    time REPORT.md states.
    """
    found = report.build()
    assert [(m["id"], m["verdict"]) for m in found["mutants"]] == [
        (m["id"], m["verdict"]) for m in REPORT["mutants"]
    ], AGAIN
    assert "survived" not in found["counts"], [
        m for m in found["mutants"] if m["verdict"] == "survived"
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "softmax:MinusInfClipped:0",
        "softmax:KeptByShape:0",
        "heads:ContainerEmptied:0",
        "training:ContainerReordered:1",
        "training:CastFloat32:2",
    ],
)
def test_the_run_beside_the_reference_finds_a_wrong_mutant(monkeypatch, name):
    """The differential run can fail: -1e9 for -inf, a result kept across calls, a caller's list emptied, a dict reordered, float32 inside."""
    mutant = next(m for m in mutants.of_module(name.split(":")[0]) if m.id == name)
    monkeypatch.setitem(
        equivalent.EQUIVALENT, name, equivalent.Equivalence("claimed, to be refuted")
    )
    assert equivalent.run(mutant) != []
