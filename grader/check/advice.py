"""What a numpy warning from the student's code most likely means, and what to do about it; needs no reference."""

# (words in a numpy warning, what it most likely means and what to do), first match wins.
WARNING_ADVICE = [
    (
        "overflow encountered in exp",
        "Past about 709, exp overflows to inf: subtract each row's maximum from its entries before exp (x - max, so that no exponent is above 0)",
    ),
    (
        "overflow",
        "A number grew past the float range (about 1.8e308): subtract each row's maximum before exp",
    ),
    (
        "invalid value encountered",
        "A 0/0, inf/inf or inf - inf made a NaN, even if it was replaced later: subtract each row's maximum "
        "before exp, so no exp overflows and no row sums to 0",
    ),
    (
        "divide by zero encountered in log",
        "A log of 0 (an exp that underflowed to 0, or a -inf score): keep such entries out of the log",
    ),
    (
        "divide by zero",
        "A division by 0: after subtracting each row's maximum, every row's sum is at least 1",
    ),
]


def warning_advice(warning: str) -> str | None:
    """What a numpy warning ("RuntimeWarning: overflow encountered in exp") means, and what to do."""
    return next((advice for words, advice in WARNING_ADVICE if words in warning), None)
