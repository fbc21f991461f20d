"""The two models of the comparison: the 8-character MLP, and the same MLP with one attention head.

Kit code the student may read. Characters are numbered with 0 as the start/end token, every
forward pass has a hand-written backward pass, and the attention model's head is whatever pair of
functions it is given: the student's attention_head and attention_head_backward, normally. The
softmax of the output layer and of sampling is given too, the student's own: this module holds
none of the exercises' code, so it ships in the student's kit as it is.
"""

import numpy as np

from grader.compare.corpus import ALPHABET

BOUNDARY = 0  # the start/end token
VOCAB = len(ALPHABET) + 1
CONTEXT = 8  # characters the MLP sees
EMBED = 16  # per character, in the MLP
HIDDEN = 128
HEAD_IN = 32  # character + position embedding fed to the head
MAX_LEN = 160  # positions with an embedding; longer samples are cut there
DTYPE = np.float32
IGNORE = -1  # a target past a reply's end
CODES = np.full(128, -1, dtype=np.int64)  # token of each ASCII character, -1 outside the alphabet
CODES[[ord(c) for c in ALPHABET]] = np.arange(1, VOCAB)


def encode(text: str) -> np.ndarray:
    """A reply as tokens: start, its characters, end."""
    codes = CODES[np.frombuffer(text.encode("ascii", errors="replace"), dtype=np.uint8)]
    if (codes < 0).any():
        raise ValueError(f"{text!r} has a character outside the alphabet")
    return np.concatenate([[BOUNDARY], codes, [BOUNDARY]])


def decode(tokens) -> str:
    """Tokens back to text, stopping at the first end token."""
    chars = []
    for t in tokens:
        if t == BOUNDARY:
            break
        chars.append(ALPHABET[t - 1])
    return "".join(chars)


def batch(replies: list) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and next-character targets for whole replies (texts or tokens): x, y (B, T), IGNORE past the end."""
    coded = [encode(r) if isinstance(r, str) else r for r in replies]
    T = max(len(c) for c in coded) - 1
    x = np.zeros((len(coded), T), dtype=np.int64)
    y = np.full((len(coded), T), IGNORE, dtype=np.int64)
    for row, c in enumerate(coded):
        x[row, : len(c) - 1] = c[:-1]
        y[row, : len(c) - 1] = c[1:]
    return x, y


def batches(replies: list[str], size: int, rng: np.random.Generator):
    """Endless (x, y) batches of `size` replies, reshuffled every pass."""
    coded = [encode(r) for r in replies]
    while True:
        order = rng.permutation(len(coded))
        for start in range(0, len(order) - size + 1, size):
            yield batch([coded[i] for i in order[start : start + size]])


def probabilities(softmax, logits: np.ndarray) -> np.ndarray:
    """softmax(logits) as a writable array of the logits' dtype (the student's softmax may return float64)."""
    probs = np.asarray(softmax(logits), dtype=logits.dtype)
    return probs if probs.flags.writeable and probs is not logits else probs.copy()


def cross_entropy(logits: np.ndarray, y: np.ndarray, softmax) -> tuple[float, np.ndarray]:
    """Mean cross-entropy over the targets that are not IGNORE, and its gradient for the logits."""
    keep = y != IGNORE
    n = max(int(keep.sum()), 1)
    probs = probabilities(softmax, logits)  # (B, T, V)
    picked = np.take_along_axis(probs, np.where(keep, y, 0)[..., None], axis=-1)[..., 0]  # (B, T)
    loss = -np.log(np.maximum(picked[keep], 1e-30)).sum() / n
    d_logits = probs
    np.put_along_axis(d_logits, np.where(keep, y, 0)[..., None], picked[..., None] - 1, axis=-1)
    d_logits *= (keep / n)[..., None].astype(logits.dtype)
    return float(loss), d_logits


def shared_cross_entropy(
    logits: np.ndarray, where: np.ndarray, targets: np.ndarray, softmax
) -> tuple[float, np.ndarray]:
    """cross_entropy over N positions whose logits are rows `where` of `logits` (M, V), and its gradient (M, V)."""
    M, V = logits.shape
    n = max(len(targets), 1)
    probs = probabilities(softmax, logits)  # (M, V)
    loss = -np.log(np.maximum(probs[where, targets], 1e-30)).sum() / n
    d_logits = probs * (np.bincount(where, minlength=M) / n).astype(logits.dtype)[:, None]
    d_logits -= (
        (np.bincount(where * V + targets, minlength=M * V) / n).astype(logits.dtype).reshape(M, V)
    )
    return float(loss), d_logits


def contexts(x: np.ndarray) -> np.ndarray:
    """The last CONTEXT tokens at every position, start tokens before the reply: (B, T) -> (B, T, 8)."""
    B, T = x.shape
    padded = np.concatenate([np.full((B, CONTEXT - 1), BOUNDARY, dtype=x.dtype), x], axis=1)
    return np.stack([padded[:, j : j + T] for j in range(CONTEXT)], axis=-1)  # (B, T, 8)


def scatter_rows(index: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Sum of `rows` into a table of `n` rows at `index`: the gradient of a table lookup."""
    width = rows.shape[-1]
    cells = (index.reshape(-1, 1) * width + np.arange(width)).reshape(-1)  # (N * width,)
    table = np.bincount(cells, weights=np.asarray(rows).reshape(-1), minlength=n * width)
    return table.reshape(n, width).astype(rows.dtype, copy=False)  # (n, width)


def context_grad(x: np.ndarray, d_u: np.ndarray) -> np.ndarray:
    """The gradient of the MLP's embeddings from that of its input d_u (B, T, 128), one row per token of x."""
    B, T = x.shape
    d_ctx = d_u.reshape(B, T, CONTEXT, EMBED)
    per_token = np.zeros((B, T + CONTEXT - 1, EMBED), dtype=d_u.dtype)  # start tokens, then x
    for j in range(CONTEXT):
        per_token[:, j : j + T] += d_ctx[:, :, j]  # slot j at position t holds token t + j
    padded = np.concatenate([np.full((B, CONTEXT - 1), BOUNDARY, dtype=x.dtype), x], axis=1)
    return scatter_rows(padded, per_token, VOCAB)  # (VOCAB, EMBED)


class CharMLP:
    """The previous lesson's model: the last 8 characters' embeddings, a tanh layer, next-character logits.

    softmax: the softmax along the last axis that turns logits into probabilities.
    """

    def __init__(self, rng: np.random.Generator, softmax):
        self.softmax = softmax
        fan_in = CONTEXT * EMBED
        self.params = {
            "emb": rng.standard_normal((VOCAB, EMBED)),
            "w1": rng.standard_normal((fan_in, HIDDEN)) / np.sqrt(fan_in),
            "b1": np.zeros(HIDDEN),
            "w2": rng.standard_normal((HIDDEN, VOCAB)) * 0.01,
            "b2": np.zeros(VOCAB),
        }
        self.params = {name: p.astype(DTYPE) for name, p in self.params.items()}

    def inputs(self, x):
        """The MLP's input at every position, its 8 characters' embeddings side by side: (B, T) -> (B, T, 128)."""
        u = np.take(self.params["emb"], contexts(x), axis=0)  # (B, T, 8, EMBED)
        return u.reshape(*x.shape, CONTEXT * EMBED), {"x": x}

    def forward(self, x):
        """Logits (B, T, V) for the token after each position, and what the backward pass needs."""
        u, cache = self.inputs(x)  # (B, T, 128)
        return self.head_forward(flat(u), cache).reshape(*x.shape, VOCAB), cache

    def head_forward(self, u, cache):
        """From the MLP's input on, (N, 128) -> (N, V): tanh layer and logits."""
        p = self.params
        h = u @ p["w1"]  # (N, HIDDEN)
        h += p["b1"]
        np.tanh(h, out=h)
        cache.update(u=u, h=h)
        logits = h @ p["w2"]
        logits += p["b2"]
        return logits

    def top_backward(self, d_logits, cache):
        """Gradients of the tanh layer and the logits' weights, and of the MLP's input: (N, V) -> (N, 128)."""
        p, h, u = self.params, cache["h"], cache["u"]
        # sums over positions as products: faster than .sum(0)
        ones = np.ones(len(h), dtype=h.dtype)
        grads = {"w2": h.T @ d_logits, "b2": ones @ d_logits}
        slope = h * h
        np.subtract(1, slope, out=slope)
        d_pre = d_logits @ p["w2"].T  # (N, HIDDEN)
        d_pre *= slope
        grads["w1"] = u.T @ d_pre
        grads["b1"] = ones @ d_pre
        return grads, d_pre @ p["w1"].T

    def input_backward(self, d_u, cache, grads) -> dict:
        """Add the gradients of what makes the MLP's input, from its gradient d_u (B, T, 128)."""
        grads["emb"] = context_grad(cache["x"], d_u)
        return grads

    def loss_and_grads(self, x, y):
        """The mean cross-entropy of the next characters and every parameter's gradient.

        The MLP's output depends on the last 8 characters alone, so each distinct context goes
        through the layers once, its gradient summed over the positions that share it.
        """
        keep = y.reshape(-1) != IGNORE
        ctx = contexts(x).reshape(-1, CONTEXT)[keep]  # (N, 8)
        targets = y.reshape(-1)[keep]  # (N,)
        keys = ctx @ (VOCAB ** np.arange(CONTEXT))  # one integer per context
        _, first, where = np.unique(keys, return_index=True, return_inverse=True)
        ctx = ctx[first]  # (M, 8) the distinct contexts
        cache = {}
        # (M, V)
        logits = self.head_forward(
            np.take(self.params["emb"], ctx, axis=0).reshape(len(ctx), -1), cache
        )
        loss, d_logits = shared_cross_entropy(logits, where, targets, self.softmax)
        grads, d_u = self.top_backward(d_logits, cache)  # (M, 128)
        grads["emb"] = scatter_rows(ctx, d_u.reshape(-1, EMBED), VOCAB)
        return loss, grads

    def next_logits(self, tokens: np.ndarray) -> np.ndarray:
        """Logits of the next token after each row of `tokens` (B, t): (B, V)."""
        u, _ = CharMLP.inputs(self, tokens[:, -CONTEXT:])
        return self.head_forward(u[:, -1], {})


class AttentionMLP(CharMLP):
    """The same MLP with one causal attention head whose output is added to the MLP's input."""

    def __init__(self, rng: np.random.Generator, head, head_backward, softmax):
        super().__init__(rng, softmax)
        self.head, self.head_backward = head, head_backward
        scale = 1 / np.sqrt(HEAD_IN)
        extra = {
            "tok": rng.standard_normal((VOCAB, HEAD_IN)) * 0.5,
            "pos": rng.standard_normal((MAX_LEN, HEAD_IN)) * 0.5,
            "w_q": rng.standard_normal((HEAD_IN, HEAD_IN)) * scale,
            "w_k": rng.standard_normal((HEAD_IN, HEAD_IN)) * scale,
            "w_v": rng.standard_normal((HEAD_IN, CONTEXT * EMBED)) * scale,
        }
        self.params.update({name: p.astype(DTYPE) for name, p in extra.items()})

    def head_input(self, x):
        """Character plus position embeddings: (B, T) -> (B, T, 32)."""
        return np.take(self.params["tok"], x, axis=0) + self.params["pos"][: x.shape[1]]

    def attend(self, x):
        """The head's input, output (B, T, 128) and shares (B, T, T)."""
        p = self.params
        a = self.head_input(x)
        out, shares = self.head(a, p["w_q"], p["w_k"], p["w_v"])
        return a, np.asarray(out, dtype=a.dtype), shares

    def inputs(self, x):
        """The MLP's input with the head's output added: (B, T) -> (B, T, 128)."""
        u, cache = super().inputs(x)
        a, out, shares = self.attend(x)
        u += out
        cache.update(a=a, shares=shares)
        return u, cache

    def input_backward(self, d_u, cache, grads) -> dict:
        """Add the embeddings' and the head's gradients, the head's through the head's own backward pass."""
        super().input_backward(d_u, cache, grads)
        p = self.params
        d_a, d_wq, d_wk, d_wv = self.head_backward(d_u, cache["a"], p["w_q"], p["w_k"], p["w_v"])
        grads.update(w_q=d_wq, w_k=d_wk, w_v=d_wv)
        d_a = np.asarray(d_a)
        grads["tok"] = scatter_rows(cache["x"], d_a, VOCAB)
        d_pos = np.zeros_like(p["pos"])
        d_pos[: d_a.shape[-2]] = d_a.sum(axis=0)  # (T, 32)
        grads["pos"] = d_pos
        return {name: np.asarray(g, dtype=p[name].dtype) for name, g in grads.items()}

    def loss_and_grads(self, x, y):
        """The mean cross-entropy of the next characters and every parameter's gradient.

        Only positions with a target go through the tanh layer: past a reply's end the gradient is zero.
        """
        rows = np.flatnonzero(y.reshape(-1) != IGNORE)  # (N,)
        u, cache = self.inputs(x)  # (B, T, 128)
        logits = self.head_forward(flat(u)[rows], cache)  # (N, V)
        loss, d_logits = cross_entropy(logits, y.reshape(-1)[rows], self.softmax)
        grads, d_rows = self.top_backward(d_logits, cache)  # (N, 128)
        d_u = np.zeros_like(u)
        flat(d_u)[rows] = d_rows
        return loss, self.input_backward(d_u, cache, grads)

    def next_logits(self, tokens: np.ndarray) -> np.ndarray:
        """Logits of the next token after each row of `tokens` (B, t): the head sees every one."""
        u, _ = CharMLP.inputs(self, tokens[:, -CONTEXT:])
        _, out, _ = self.attend(tokens)
        return self.head_forward(u[:, -1] + out[:, -1], {})


def flat(a: np.ndarray) -> np.ndarray:
    """All leading axes as one: (..., n) -> (N, n)."""
    return a.reshape(-1, a.shape[-1])


def sample(model, rng: np.random.Generator, n: int) -> list[str]:
    """`n` replies written by the model from the start token, at temperature 1, all at once."""
    tokens = np.zeros((n, 1), dtype=np.int64)  # (n, t)
    writing = np.ones(n, dtype=bool)
    while writing.any() and tokens.shape[1] < MAX_LEN:
        # (writing, V)
        probs = probabilities(model.softmax, model.next_logits(tokens[writing]).astype(np.float64))
        picked = (probs.cumsum(axis=-1) < rng.random((len(probs), 1))).sum(axis=-1)
        step = np.zeros(n, dtype=np.int64)
        step[writing] = np.minimum(picked, VOCAB - 1)
        tokens = np.concatenate([tokens, step[:, None]], axis=1)
        writing &= step != BOUNDARY
    return [decode(row[1:]) for row in tokens]
