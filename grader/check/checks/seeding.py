"""What every drawn check gets before it runs, under pytest (conftest.py) or the grader's own run (grader.check.collector).

The run's fixed seed, so a run can be replayed exactly, and each example starting with nothing printed.
"""

from hypothesis import seed


def seeded(check, number: int):
    """The check, its Hypothesis test given this seed and told of each new example; a check that draws nothing as it is."""
    # a check also run at the comparison's sizes wraps its drawn test
    test = getattr(check, "drawn", check)
    if hasattr(test, "hypothesis"):
        seed(number)(test)
        test.hypothesis.inner_test = each_example(test.hypothesis.inner_test)
    return check


def each_example(inner):
    """The inner test Hypothesis runs once per input, forgetting the last input's printed output first."""

    def run(*args, **kwargs):
        (
            kwargs["submission"] if "submission" in kwargs else args[0]
        ).printed.new_example()  # the fixture, by name or first
        return inner(*args, **kwargs)

    return run
