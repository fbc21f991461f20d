"""The known-mistake diagnosis: it names a mistake only where that mistake's output differs from the right one."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.check.checks import strategies as drawn
from grader.check.diagnosis import MISTAKES, RIGHT, diagnose
from solutions.softmax import softmax


@st.composite
def softmax_backward_inputs(draw):
    """shares = softmax(x) and d_shares."""
    x = draw(drawn.softmax_inputs(bound=3.0))
    return softmax(x), drawn.fill(draw, x.shape, 2.0)


@st.composite
def head_backward_inputs(draw):
    """d_out and a head's inputs."""
    x, w_q, w_k, w_v = draw(drawn.head_inputs())
    return drawn.fill(draw, x.shape[:-1] + w_v.shape[-1:], 2.0), x, w_q, w_k, w_v


INPUTS = {  # every function the diagnosis knows, with inputs down to a single entry per axis
    "attention_scores": drawn.queries_and_keys(),
    "causal_mask": st.integers(1, 6).map(lambda t: (t,)),
    "apply_causal_mask": drawn.square_scores().map(lambda s: (s,)),
    "softmax": drawn.softmax_inputs(bound=1e4).map(lambda x: (x,)),
    "attention_head": drawn.head_inputs(),
    "multi_head_attention": drawn.multi_head_inputs(),
    "softmax_backward": softmax_backward_inputs(),
    "attention_head_backward": head_backward_inputs(),
}
PARTS = {"attention_head": (0, 1), "attention_head_backward": (0, 1, 2, 3)}


def test_every_function_with_mistakes_has_inputs():
    """The test below covers every function the diagnosis can name a mistake of."""
    assert set(MISTAKES) == set(INPUTS) == set(RIGHT)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(sorted(INPUTS)).flatmap(lambda key: st.tuples(st.just(key), INPUTS[key])))
def test_the_right_output_is_never_called_a_mistake(case):
    """On any input, the right output gets no diagnosis, even where a mistake gives the same (a 1-D softmax, d = 1)."""
    key, args = case
    for part in PARTS.get(key, (None,)):
        value = RIGHT[key](*args)
        right = value if part is None else value[part]
        assert diagnose(key, args, np.asarray(right), part) == (), (key, args)


def test_the_issue_case_a_1d_softmax_is_not_along_the_wrong_axis():
    """x = [2740.] with an epsilon under the line: along the first axis is the last, so that mistake is not named."""
    x = np.array([2740.0])
    assert diagnose("softmax", (x,), np.array([1.0 / (1.0 + 1e-8)])) == ()


@st.composite
def general(draw, key):
    """Inputs big enough that every mistake of key differs from the right output."""
    rng = np.random.default_rng(draw(st.integers(0, 50)))

    def a(*shape, bound=2.0):
        return rng.uniform(-bound, bound, shape)

    x, heads = a(2, 3, 4, 3), [(a(3, 2), a(3, 2), a(3, 2)), (a(3, 2), a(3, 2), a(3, 2))]
    masked = np.where(np.triu(np.ones((4, 4), bool), 1), -np.inf, a(2, 3, 4, 4))
    return {
        "attention_scores": (a(2, 3, 4, 3), a(2, 3, 5, 3)),
        "causal_mask": (5,),
        "apply_causal_mask": (a(2, 3, 4, 4),),
        "softmax": (a(2, 3, 4, 5, bound=800.0),),
        "attention_head": (x, *heads[0]),
        "multi_head_attention": (x, heads, a(4, 3)),
        "softmax_backward": (softmax(masked), a(2, 3, 4, 4)),
        "attention_head_backward": (a(2, 3, 4, 2), x, *heads[0]),
    }[key]


@settings(max_examples=5, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_each_mistake_is_named_where_it_shows(data):
    """Every known mistake's own output, on a general input, is found to be that mistake."""
    for key, mistakes in MISTAKES.items():
        args = data.draw(general(key))
        for name, wrong in mistakes:
            for part in PARTS.get(key, (None,)):
                with np.errstate(all="ignore"):
                    value = wrong(*args)
                got = np.asarray(value if part is None else value[part])
                right = np.asarray(RIGHT[key](*args) if part is None else RIGHT[key](*args)[part])
                if got.shape == right.shape and np.allclose(got, right, equal_nan=True):
                    continue  # this part is right in this mistake (the shares of a head with a wrong value path)
                assert name in diagnose(key, args, got, part), (key, name, part)
