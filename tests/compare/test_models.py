"""The comparison's models: shapes, batching, sampling, and every gradient against finite differences."""

import numpy as np
import pytest

from grader.compare import models
from grader.compare.corpus import ALPHABET
from grader.compare.job import still_masked, without_mask
from solutions.heads import attention_head
from solutions.masking import apply_causal_mask
from solutions.softmax import softmax
from solutions.training import attention_head_backward

REPLIES = [
    "hi anna, the box is past the 7-day window, so sadly we cannot take it back. take care.",
    "dear leo, ok.",
]


def float64(model):
    """The model with float64 weights, for finite differences."""
    model.params = {name: p.astype(np.float64) for name, p in model.params.items()}
    return model


def mlp():
    return float64(models.CharMLP(np.random.default_rng(0), softmax))


def masked():
    return float64(
        models.AttentionMLP(
            np.random.default_rng(1), attention_head, attention_head_backward, softmax
        )
    )


def unmasked_pair():
    """The reference head and its backward pass with their apply_causal_mask replaced by the identity, as --no-mask does."""
    return tuple(
        without_mask(f, apply_causal_mask, package="solutions")
        for f in (attention_head, attention_head_backward)
    )


def unmasked():
    return float64(models.AttentionMLP(np.random.default_rng(2), *unmasked_pair(), softmax))


def tiny_batch():
    """Two short replies of different lengths, so one row is padded."""
    x, y = models.batch(["hi anna, ok.", "dear leo, fine."])
    return x[:, :9], y[:, :9]


def test_encode_and_decode_round_trip():
    tokens = models.encode(REPLIES[0])
    assert tokens[0] == tokens[-1] == models.BOUNDARY
    assert models.decode(tokens[1:]) == REPLIES[0]
    assert models.VOCAB == len(ALPHABET) + 1


@pytest.mark.parametrize("text", ["Hello", "café", "what?"])
def test_encode_refuses_characters_outside_the_alphabet(text):
    with pytest.raises(ValueError, match="outside the alphabet"):
        models.encode(text)


def test_batch_pads_targets_with_ignore():
    x, y = models.batch(REPLIES)
    long, short = len(REPLIES[0]) + 1, len(REPLIES[1]) + 1
    assert x.shape == y.shape == (2, long)
    assert (y[1, short:] == models.IGNORE).all() and y[1, short - 1] == models.BOUNDARY
    assert (x[:, 1:] == np.where(y[:, :-1] == models.IGNORE, 0, y[:, :-1])).all()


def test_contexts_are_the_last_eight_tokens():
    x = np.arange(1, 11)[None, :]  # (1, 10)
    ctx = models.contexts(x)
    assert ctx.shape == (1, 10, models.CONTEXT)
    assert ctx[0, 9].tolist() == list(range(3, 11))
    assert ctx[0, 2].tolist() == [0] * 5 + [1, 2, 3]


def test_cross_entropy_ignores_padding_and_matches_by_hand():
    logits = np.random.default_rng(3).standard_normal((2, 3, models.VOCAB))
    y = np.array([[1, 2, 3], [4, models.IGNORE, models.IGNORE]])
    loss, grad = models.cross_entropy(logits.copy(), y, softmax)
    p = softmax(logits)
    by_hand = -np.mean(
        [np.log(p[0, 0, 1]), np.log(p[0, 1, 2]), np.log(p[0, 2, 3]), np.log(p[1, 0, 4])]
    )
    assert loss == pytest.approx(by_hand, rel=1e-12)
    assert (grad[1, 1:] == 0).all()


@pytest.mark.parametrize("make", [mlp, masked, unmasked], ids=["mlp", "attention", "no_mask"])
def test_gradients_match_finite_differences(make):
    model, (x, y) = make(), tiny_batch()
    _, grads = model.loss_and_grads(x, y)
    assert set(grads) == set(model.params)
    rng = np.random.default_rng(4)
    for name, p in model.params.items():
        assert grads[name].shape == p.shape, name
        used = np.argwhere(grads[name] != 0)
        picks = [
            tuple(i) for i in used[rng.choice(len(used), size=min(6, len(used)), replace=False)]
        ]
        # maybe an unused entry, gradient 0
        picks.append(tuple(rng.integers(0, s) for s in p.shape))
        for index in picks:
            keep = p[index]
            p[index] = keep + 1e-6
            up, _ = model.loss_and_grads(x, y)
            p[index] = keep - 1e-6
            down, _ = model.loss_and_grads(x, y)
            p[index] = keep
            assert grads[name][index] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-8), (
                name,
                index,
            )


def test_mask_makes_a_position_blind_to_later_characters():
    x, _ = tiny_batch()
    changed = x.copy()
    changed[:, 5:] = 3
    for model, blind in ((masked(), True), (unmasked(), False)):
        before, _ = model.forward(x)
        after, _ = model.forward(changed)
        assert np.allclose(before[:, :5], after[:, :5]) == blind


def test_model_reads_weights_from_params_on_every_call():
    model, (x, y) = mlp(), tiny_batch()
    loss, _ = model.loss_and_grads(x, y)
    # a replaced entry, as a dict-replacing sgd_step leaves it
    model.params["w2"] = model.params["w2"] * 0
    other, _ = model.loss_and_grads(x, y)
    assert other == pytest.approx(np.log(models.VOCAB)) and other != pytest.approx(loss)


def test_next_logits_match_the_full_forward_pass():
    x, _ = tiny_batch()
    for model in (mlp(), masked()):
        logits, _ = model.forward(x)
        assert np.allclose(model.next_logits(x[:, :6]), logits[:, 5])


@pytest.mark.slow
def test_sampling_is_deterministic_for_a_seed():
    model = masked()
    first = models.sample(model, np.random.default_rng(5), 4)
    again = models.sample(model, np.random.default_rng(5), 4)
    assert first == again and len(first) == 4
    assert all(set(reply) <= set(ALPHABET) and len(reply) < models.MAX_LEN for reply in first)
    assert first != models.sample(model, np.random.default_rng(6), 4)


def test_mlp_loss_counts_every_position_of_a_shared_context():
    model = float64(models.CharMLP(np.random.default_rng(5), softmax))
    # 8-character contexts repeat
    x, y = models.batch(["hi anna, hi anna, hi anna.", "hi anna, ok."])
    loss, grads = model.loss_and_grads(x, y)
    logits, _ = model.forward(x)
    expected, d_logits = models.cross_entropy(logits, y, softmax)
    assert loss == pytest.approx(expected, rel=1e-12)
    assert np.allclose(grads["b2"], d_logits.sum(axis=(0, 1)), rtol=1e-10, atol=1e-14)


def test_no_mask_takes_the_mask_out_of_the_students_own_head_and_puts_it_back():
    """--no-mask's head is the student's with apply_causal_mask the identity during its calls only."""
    import solutions.heads

    head, head_backward = unmasked_pair()
    assert still_masked(head, head_backward) is None
    # masked: the probe says so
    assert still_masked(attention_head, attention_head_backward) is not None
    assert solutions.heads.apply_causal_mask is apply_causal_mask  # put back after the calls


def test_a_head_that_masks_without_apply_causal_mask_is_named():
    """A head that masks by hand cannot be unmasked by replacing apply_causal_mask; the probe says which function."""

    def by_hand(x, w_q, w_k, w_v):
        scores = (x @ w_q) @ np.swapaxes(x @ w_k, -1, -2)
        shares = softmax(np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf))
        return shares @ (x @ w_v), shares

    head, head_backward = unmasked_pair()
    masked_by_hand = without_mask(by_hand, apply_causal_mask, package="solutions")
    assert "attention_head masks without calling" in still_masked(masked_by_hand, head_backward)
