"""Inputs the student's code must leave as they were: compared whole with the grader's own copy, made before the call."""

import numpy as np

from grader.check.checks.harness import fail


def expect_unchanged(before: dict, after, function: str):
    """Fail when the student's function changed one of its inputs.

    before: by name, the grader's own deep copies of the arguments, made before the call; after: the
    same arguments as the call left them, in the same order. Containers are compared whole: their
    kind, length, keys and the keys' order, and every entry, arrays by dtype, shape and value.
    """
    for (name, old), new in zip(before.items(), after):
        if (found := difference(old, new)) is not None:
            path, said, old_part, new_part = found
            fail(
                f"{function} changed its input {name}{path}; it must leave its inputs as they were (work on a copy, or build a new array).{said}",
                {f"{name}{path} before": old_part, f"{name}{path} after": new_part},
            )


def entries(n: int) -> str:
    return f"{n} {'entry' if n == 1 else 'entries'}"


def difference(old, new, path: str = "") -> tuple[str, str, object, object] | None:
    """Where new differs from old, the first place found: (path such as "[0][2]" or "['w']", what changed in words, old's part, new's part)."""
    if isinstance(old, np.ndarray):
        same = (
            type(new) is np.ndarray
            and new.dtype == old.dtype
            and new.shape == old.shape
            and np.array_equal(new, old, equal_nan=True)
        )
        return None if same else (path, "", old, new)
    if type(new) is not type(old):
        return (
            path,
            f" It was a {type(old).__name__} before the call and is a {type(new).__name__} after.",
            old,
            new,
        )
    if isinstance(old, (list, tuple)):
        if len(new) != len(old):
            return (
                path,
                f" It had {entries(len(old))} before the call and {entries(len(new))} after.",
                old,
                new,
            )
        return next(
            (
                found
                for i, (a, b) in enumerate(zip(old, new))
                if (found := difference(a, b, f"{path}[{i}]"))
            ),
            None,
        )
    if isinstance(old, dict):
        if list(new) != list(old):
            how = " in another order" if set(new) == set(old) else ""
            return (
                path,
                f" Its keys were{how}: {list(old)} before the call, {list(new)} after.",
                list(old),
                list(new),
            )
        return next(
            (found for key in old if (found := difference(old[key], new[key], f"{path}[{key!r}]"))),
            None,
        )
    return None if old == new else (path, "", old, new)
