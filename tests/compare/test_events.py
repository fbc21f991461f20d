"""What the training job may send: any value is an event as the job sends it, or refused with ValueError."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.compare.events import EVENTS, checked

FIELDS = sorted({name for needed, optional in EVENTS.values() for name in (*needed, *optional)})
ANY = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=6),
        st.sampled_from(["mlp", "attention", 10**400]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=3)
    ),
    max_leaves=8,
)
EVENT = st.fixed_dictionaries(
    {"event": st.sampled_from([*EVENTS, "other"])}, optional={name: ANY for name in FIELDS}
)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.one_of(EVENT, ANY))
def test_any_value_is_an_event_with_every_field_as_it_must_be_or_refused(value):
    try:
        event = checked(value)
    except ValueError:
        return
    needed, optional = EVENTS[event["event"]]
    assert set(needed) <= set(event) - {"event"} <= set(needed) | set(optional)


def test_the_jobs_own_events_pass_and_the_students_text_is_shown_escaped():
    model = {
        "model": "mlp",
        "decision_probs": [0.5],
        "replies": ["yes"],
        "losses": [1.0, 0.5],
        "train_seconds": 2.0,
    }
    assert checked({"event": "model", **model})["replies"] == ["yes"]
    error = checked(
        {
            "event": "error",
            "kind": "raised",
            "model": None,
            "message": "ValueError: \x1b]0;owned\x07",
        }
    )
    assert "\x1b" not in error["message"] and "\x07" not in error["message"]


def test_a_number_past_any_float_is_refused_not_raised():
    for loss in (10**400, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="loss"):
            checked({"event": "progress", "model": "mlp", "step": 1, "steps": 3, "loss": loss})


def test_an_attention_map_that_reads_nothing_is_refused():
    model = {
        "model": "attention",
        "decision_probs": [0.5],
        "replies": ["yes"],
        "losses": [1.0],
        "train_seconds": 2.0,
    }
    unread = {"text": "ab", "start_share": 0.0, "shares": [0.0, 0.0]}
    with pytest.raises(ValueError, match="attention_map"):
        checked({"event": "model", **model, "attention_map": unread})
    for read in ({"shares": [0.25, 0.75]}, {"start_share": 1.0}):
        assert checked({"event": "model", **model, "attention_map": {**unread, **read}})[
            "attention_map"
        ] == {**unread, **read}
