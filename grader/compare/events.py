"""What compare's training job may send the grader: each event by its kind, its fields and what each must hold.

The job runs the student's code in its own process, and that code can write on the job's pipe too:
an event is taken only with exactly the fields of its kind, each holding what the report will use.
"""

import sys

from grader import outlet

MODELS = ("mlp", "attention", "attention_no_mask")
NEEDED = ("mlp", "attention")  # the models a finished job has reported
LARGEST = sys.float_info.max


def number(value) -> bool:
    """An int or float a float can hold, nan and inf aside (compared exactly: an int past any float is no OverflowError)."""
    return type(value) in (int, float) and -LARGEST <= value <= LARGEST


def count(value) -> bool:
    return type(value) is int and value >= 0


def text(value) -> bool:
    return type(value) is str


def model(value) -> bool:
    return type(value) is str and value in MODELS


def numbers(value) -> bool:
    return type(value) is list and len(value) > 0 and all(number(item) for item in value)


def texts(value) -> bool:
    return type(value) is list and len(value) > 0 and all(text(item) for item in value)


def share(value) -> bool:
    return number(value) and value >= 0


def shares(value) -> bool:
    return type(value) is list and len(value) > 0 and all(share(item) for item in value)


def picture(value) -> bool:
    """An attention map: the reply's text before the decision, and the share of each character and of the start, some read."""
    fields = {"text": text, "start_share": share, "shares": shares}
    return (
        type(value) is dict
        and _holds(value, fields, {}) is None
        and max([*value["shares"], value["start_share"]]) > 0
    )


EVENTS = {
    "started": ({"landlocked": lambda value: type(value) is bool}, {}),
    "progress": (
        {
            "model": model,
            "step": count,
            "steps": lambda value: count(value) and value > 0,
            "loss": number,
        },
        {},
    ),
    "status": ({"model": model, "text": text}, {}),
    "model": (
        {
            "model": model,
            "decision_probs": numbers,
            "replies": texts,
            "losses": numbers,
            "train_seconds": number,
        },
        {"attention_map": picture},
    ),
    "notice": ({"text": text}, {}),
    "error": (
        {"kind": text, "model": lambda value: value is None or model(value), "message": text},
        {},
    ),
    "done": ({}, {}),
}


def checked(event) -> dict:
    """The event, when it is one the job sends with every field as it must be, its text as a terminal may show it (an
    error's message quotes the student's exception); else ValueError, saying what is wrong."""
    if type(event) is not dict or type(kind := event.get("event")) is not str or kind not in EVENTS:
        raise ValueError("not one of the job's events")
    wrong = _holds({key: value for key, value in event.items() if key != "event"}, *EVENTS[kind])
    if wrong is not None:
        raise ValueError(f"a {kind} event {wrong}")
    return _visible(event)


def _visible(value):
    """The value with every str in it shown as text (grader.outlet.terminal)."""
    if type(value) is str:
        return outlet.terminal(value, "\n\t")
    if type(value) is list:
        return [_visible(item) for item in value]
    if type(value) is dict:
        return {key: _visible(item) for key, item in value.items()}
    return value


def _holds(fields: dict, needed: dict, optional: dict) -> str | None:
    """What is wrong with the fields (missing, unknown or not as they must be), or None."""
    if missing := [name for name in needed if name not in fields]:
        return f"without {missing[0]}"
    for name, value in fields.items():
        test = needed.get(name) if type(name) is str else None
        test = test or (optional.get(name) if type(name) is str else None)
        if test is None:
            return f"with a field {str(name)[:40]!r} it does not have"
        if not test(value):
            return f"whose {name} is not what it must be"
    return None
