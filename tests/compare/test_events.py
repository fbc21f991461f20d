"""What the training job may send: any value is an event as the job sends it, or refused with ValueError."""

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.compare.events import EVENTS, checked

FIELDS = sorted({name for needed, optional in EVENTS.values() for name in (*needed, *optional)})
ANY = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6), st.sampled_from(["mlp", "attention"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=3)),
    max_leaves=8,
)
EVENT = st.fixed_dictionaries({"event": st.sampled_from([*EVENTS, "other"])}, optional={name: ANY for name in FIELDS})


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
    model = {"model": "mlp", "decision_probs": [0.5], "replies": ["yes"], "losses": [1.0, 0.5], "train_seconds": 2.0}
    assert checked({"event": "model", **model})["replies"] == ["yes"]
    error = checked({"event": "error", "kind": "raised", "model": None, "message": "ValueError: \x1b]0;owned\x07"})
    assert "\x1b" not in error["message"] and "\x07" not in error["message"]
