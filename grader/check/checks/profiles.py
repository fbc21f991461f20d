"""The checks' Hypothesis profiles: the same examples on every run, in every process that imports this."""

from hypothesis import HealthCheck, Phase, Verbosity, settings

COMMON = dict(
    derandomize=True,
    database=None,
    deadline=None,
    report_multiple_bugs=False,
    print_blob=False,
    verbosity=Verbosity.quiet,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.generate, Phase.shrink),  # no explain phase: it reruns many times
)
settings.register_profile("default", max_examples=30, **COMMON)  # a student's run
# the kit's mutant matrix
settings.register_profile(
    "quick", max_examples=15, **dict(COMMON, phases=(Phase.explicit, Phase.generate))
)
settings.register_profile("thorough", parent=settings.get_profile("ci"), max_examples=300, **COMMON)

# For a property the values hardly matter to (whether a function changes its inputs): fewer examples,
# built on the default profile here, so it never takes settings from whatever profile was loaded first.
FEW = settings(settings.get_profile("default"), max_examples=10)
