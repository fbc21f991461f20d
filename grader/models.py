"""The two models of the comparison: the 8-character MLP, and the same MLP with one attention head.

Kit code the student may read. Characters are numbered with 0 as the start/end token, every
forward pass has a hand-written backward pass, and the attention model's head is whatever pair of
functions it is given: the student's attention_head and attention_head_backward, normally.
"""

import numpy as np

from grader.corpus import ALPHABET

BOUNDARY = 0  # the start/end token
VOCAB = len(ALPHABET) + 1
CONTEXT = 8  # characters the MLP sees
EMBED = 16  # per character, in the MLP
HIDDEN = 128
HEAD_IN = 32  # character + position embedding fed to the head
MAX_LEN = 160  # positions with an embedding; longer samples are cut there
DTYPE = np.float32
IGNORE = -1  # a target past a reply's end


def encode(text: str) -> np.ndarray:
    """A reply as tokens: start, its characters, end."""
    return np.array([BOUNDARY, *(ALPHABET.index(c) + 1 for c in text), BOUNDARY], dtype=np.int64)


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


def softmax(z: np.ndarray) -> np.ndarray:
    """Softmax along the last axis."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy over the targets that are not IGNORE, and its gradient for the logits."""
    keep = y != IGNORE
    n = max(int(keep.sum()), 1)
    probs = softmax(logits)  # (B, T, V)
    picked = np.take_along_axis(probs, np.where(keep, y, 0)[..., None], axis=-1)[..., 0]  # (B, T)
    loss = -np.log(np.maximum(picked[keep], 1e-30)).sum() / n
    d_logits = probs
    np.put_along_axis(d_logits, np.where(keep, y, 0)[..., None], picked[..., None] - 1, axis=-1)
    d_logits *= (keep / n)[..., None].astype(logits.dtype)
    return float(loss), d_logits


def contexts(x: np.ndarray) -> np.ndarray:
    """The last CONTEXT tokens at every position, start tokens before the reply: (B, T) -> (B, T, 8)."""
    B, T = x.shape
    padded = np.concatenate([np.full((B, CONTEXT - 1), BOUNDARY, dtype=x.dtype), x], axis=1)
    return np.stack([padded[:, j : j + T] for j in range(CONTEXT)], axis=-1)  # (B, T, 8)


def scatter_rows(index: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Sum of `rows` into a table of `n` rows at `index`: the gradient of a table lookup."""
    one_hot = index.reshape(-1, 1) == np.arange(n)  # (N, n)
    return one_hot.T.astype(rows.dtype) @ rows.reshape(-1, rows.shape[-1])  # (n, width)


class CharMLP:
    """The previous lesson's model: the last 8 characters' embeddings, a tanh layer, next-character logits."""

    def __init__(self, rng: np.random.Generator):
        fan_in = CONTEXT * EMBED
        self.params = {
            "emb": rng.standard_normal((VOCAB, EMBED)),
            "w1": rng.standard_normal((fan_in, HIDDEN)) / np.sqrt(fan_in),
            "b1": np.zeros(HIDDEN),
            "w2": rng.standard_normal((HIDDEN, VOCAB)) * 0.01,
            "b2": np.zeros(VOCAB),
        }
        self.params = {name: p.astype(DTYPE) for name, p in self.params.items()}

    def mlp_input(self, x):
        """The MLP's input: its 8 characters' embeddings side by side, (B, T) -> (B, T, 128)."""
        ctx = contexts(x)  # (B, T, 8)
        return self.params["emb"][ctx].reshape(*x.shape, CONTEXT * EMBED), ctx

    def forward(self, x):
        """Logits (B, T, V) for the token after each position, and what the backward pass needs."""
        u, ctx = self.mlp_input(x)  # (B, T, 128)
        return self.head_forward(u, {"ctx": ctx})

    def head_forward(self, u, cache):
        """From the MLP's input on: tanh layer and logits."""
        p = self.params
        h = np.tanh(u @ p["w1"] + p["b1"])  # (B, T, HIDDEN)
        cache.update(u=u, h=h)
        return h @ p["w2"] + p["b2"], cache  # (B, T, V)

    def backward(self, d_logits, cache) -> dict:
        """Gradients of every parameter, from the logits' gradient."""
        grads, d_u = self.top_backward(d_logits, cache)
        d_emb = d_u.reshape(*d_u.shape[:-1], CONTEXT, EMBED)  # (B, T, 8, EMBED)
        grads["emb"] = scatter_rows(cache["ctx"], d_emb, VOCAB)
        return grads

    def top_backward(self, d_logits, cache):
        """Gradients of the tanh layer and the logits' weights, and of the MLP's input."""
        p, h, u = self.params, cache["h"], cache["u"]
        grads = {"w2": flat(h).T @ flat(d_logits), "b2": flat(d_logits).sum(0)}
        d_pre = (d_logits @ p["w2"].T) * (1 - h * h)  # (B, T, HIDDEN)
        grads["w1"] = flat(u).T @ flat(d_pre)
        grads["b1"] = flat(d_pre).sum(0)
        return grads, d_pre @ p["w1"].T  # (B, T, 128)

    def loss_and_grads(self, x, y):
        """The mean cross-entropy of the next characters and every parameter's gradient."""
        logits, cache = self.forward(x)
        loss, d_logits = cross_entropy(logits, y)
        return loss, self.backward(d_logits, cache)

    def next_logits(self, tokens: np.ndarray) -> np.ndarray:
        """Logits of the next token after each row of `tokens` (B, t): (B, V)."""
        u, _ = self.mlp_input(tokens[:, -CONTEXT:])
        logits, _ = self.head_forward(u[:, -1:], {})
        return logits[:, 0]


class AttentionMLP(CharMLP):
    """The same MLP with one causal attention head whose output is added to the MLP's input."""

    def __init__(self, rng: np.random.Generator, head, head_backward):
        super().__init__(rng)
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
        return self.params["tok"][x] + self.params["pos"][: x.shape[1]]

    def attend(self, x):
        """The head's input, output (B, T, 128) and shares (B, T, T)."""
        p = self.params
        a = self.head_input(x)
        out, shares = self.head(a, p["w_q"], p["w_k"], p["w_v"])
        return a, np.asarray(out, dtype=a.dtype), shares

    def forward(self, x):
        """Logits (B, T, V), with the head's output added to the 8 characters' embeddings."""
        u, ctx = self.mlp_input(x)  # (B, T, 128)
        a, out, shares = self.attend(x)
        return self.head_forward(u + out, {"ctx": ctx, "x": x, "a": a, "shares": shares})

    def backward(self, d_logits, cache) -> dict:
        """Gradients of every parameter, the head's through the head's own backward pass."""
        grads, d_u = self.top_backward(d_logits, cache)
        p = self.params
        d_a, d_wq, d_wk, d_wv = self.head_backward(d_u, cache["a"], p["w_q"], p["w_k"], p["w_v"])
        grads.update(w_q=d_wq, w_k=d_wk, w_v=d_wv)
        grads["emb"] = scatter_rows(cache["ctx"], d_u.reshape(*d_u.shape[:-1], CONTEXT, EMBED), VOCAB)
        grads["tok"] = scatter_rows(cache["x"], d_a, VOCAB)
        d_pos = np.zeros_like(p["pos"])
        d_pos[: d_a.shape[-2]] = np.asarray(d_a).sum(axis=0)  # (T, 32)
        grads["pos"] = d_pos
        return {name: np.asarray(g, dtype=p[name].dtype) for name, g in grads.items()}

    def next_logits(self, tokens: np.ndarray) -> np.ndarray:
        """Logits of the next token after each row of `tokens` (B, t): the head sees every one."""
        u, _ = self.mlp_input(tokens[:, -CONTEXT:])
        _, out, _ = self.attend(tokens)
        logits, _ = self.head_forward(u[:, -1:] + out[:, -1:], {})
        return logits[:, 0]


def flat(a: np.ndarray) -> np.ndarray:
    """All leading axes as one: (..., n) -> (N, n)."""
    return a.reshape(-1, a.shape[-1])


def unmasked_head(x, w_q, w_k, w_v):
    """An attention head WITHOUT the causal mask: every position sees the whole reply."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (..., T, d), (..., T, d), (..., T, d_v)
    shares = softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))  # (..., T, T)
    return shares @ v, shares


def unmasked_head_backward(d_out, x, w_q, w_k, w_v):
    """The gradients of sum(d_out * out) for out = unmasked_head(x, w_q, w_k, w_v)[0]."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scale = 1 / np.sqrt(q.shape[-1])
    shares = softmax(q @ np.swapaxes(k, -1, -2) * scale)  # (..., T, T)
    d_v = np.swapaxes(shares, -1, -2) @ d_out  # (..., T, d_v)
    d_shares = d_out @ np.swapaxes(v, -1, -2)  # (..., T, T)
    d_scores = shares * (d_shares - (d_shares * shares).sum(-1, keepdims=True)) * scale
    d_q, d_k = d_scores @ k, np.swapaxes(d_scores, -1, -2) @ q  # (..., T, d)
    d_x = d_q @ w_q.T + d_k @ w_k.T + d_v @ w_v.T  # (..., T, C)
    rows = flat(x)
    return d_x, rows.T @ flat(d_q), rows.T @ flat(d_k), rows.T @ flat(d_v)


def sample(model, rng: np.random.Generator, n: int) -> list[str]:
    """`n` replies written by the model from the start token, at temperature 1, all at once."""
    tokens = np.zeros((n, 1), dtype=np.int64)  # (n, t)
    writing = np.ones(n, dtype=bool)
    while writing.any() and tokens.shape[1] < MAX_LEN:
        probs = softmax(model.next_logits(tokens[writing]).astype(np.float64))  # (writing, V)
        picked = (probs.cumsum(axis=-1) < rng.random((len(probs), 1))).sum(axis=-1)
        step = np.zeros(n, dtype=np.int64)
        step[writing] = np.minimum(picked, VOCAB - 1)
        tokens = np.concatenate([tokens, step[:, None]], axis=1)
        writing &= step != BOUNDARY
    return [decode(row[1:]) for row in tokens]
