"""How students write the ten functions: each a few ways to be right, each way in a student's own habits, and real mistakes.

A Style is one student's habits, drawn once (how they transpose, sum a row, take a square root,
name things, comment); a writer gives a function's body lines in that style, right or with one of
the mistakes in tests/mutants/wrong/ (by its name there), made in the student's own words.
"""

import random
from dataclasses import dataclass, field

NAMES = {  # role -> what students call it
    "d": ["d", "d_k", "dim", "depth", "head_dim", "D", "n"],
    "scores": ["scores", "s", "out", "result", "logits", "att", "sc"],
    "mask": ["mask", "m", "allowed", "keep", "lower", "visible", "causal"],
    "idx": ["i", "idx", "pos", "r", "positions", "ar"],
    "top": ["top", "m", "mx", "x_max", "row_max", "maxes", "biggest", "peak"],
    "e": ["e", "ex", "exps", "exp_x", "z", "num", "numer", "expd"],
    "total": ["total", "s", "denom", "norm", "sums", "z_sum", "row_sum"],
    "shares": ["shares", "weights", "attn", "probs", "a", "w", "p", "alpha"],
    "out": ["out", "y", "context", "result", "res", "o", "head_out"],
    "outs": ["outs", "outputs", "results", "head_outs", "ys", "parts"],
    "all_shares": ["shares", "all_shares", "weights", "attns", "maps", "probs"],
    "joined": ["joined", "concat", "cat", "stacked", "h", "merged", "combined"],
    "dot": ["dot", "inner", "s", "total", "weighted", "proj", "c"],
    "rows": ["rows", "flat", "x2", "xf", "x_flat", "x_rows"],
    "name": ["name", "key", "k", "n", "p", "param"],
    "losses": ["losses", "history", "out", "ls", "loss_list", "record"],
    "step": ["_", "i", "step", "t", "s", "it"],
}
# fmt: skip
COMMENTS = [
    "compute the scores",
    "scale by sqrt(d)",
    "mask out the future",
    "numerically stable",
    "subtract the max for stability",
    "normalise each row",
    "project the input",
    "TODO: check the shapes",
    "this took me a while",
    "see lecture 4",
    "weights sum to 1",
    "backprop through the softmax",
    "chain rule",
    "gradient descent step",
    "sum over the batch",
    "as in the notes",
    "not sure about this",
    "keepdims so it broadcasts",
    "transpose the last two axes",
    "works for batches too",
]
SHAPES = [
    "(..., T, S)",
    "(..., T, d)",
    "(..., T, T)",
    "(..., 1)",
    "(T, T)",
    "(..., T, d_v)",
    "(C, d)",
    "(N, C)",
]
# parameters that are one array
ARRAYS = {
    "q",
    "k",
    "x",
    "scores",
    "shares",
    "d_shares",
    "d_out",
    "w_q",
    "w_k",
    "w_v",
    "w_o",
}
FIRST_NAMES = [
    "Ada",
    "Bo",
    "Cy",
    "Dee",
    "Eli",
    "Fay",
    "Gus",
    "Hal",
    "Ivy",
    "Jo",
    "Kai",
    "Lou",
    "Max",
    "Ned",
    "Ona",
    "Pia",
]


@dataclass
class Style:
    """One student's habits."""

    rng: random.Random
    names: dict = field(default_factory=dict)
    transpose: int = 0
    product: int = 0
    root: int = 0
    rowsum: int = 0
    rowmax: int = 0
    comments: float = 0.0  # how often a line gets a comment
    helpers: bool = False  # writes small helper functions
    tuples: bool = False  # assigns several names on one line
    inline: bool = False  # nests calls rather than naming each step
    own: str = ""  # the student's first name, which some put in a comment
    careful: float = 0.0  # how often a function starts by checking or converting its arguments
    verbose: bool = False  # names each intermediate result
    wander: float = 0.0  # how often a habit gives way to another form

    @classmethod
    def draw(cls, rng: random.Random) -> "Style":
        names = {role: rng.choice(options) for role, options in NAMES.items()}
        # fmt: skip
        return cls(
            rng,
            names,
            rng.randrange(5),
            rng.randrange(3),
            rng.randrange(4),
            rng.randrange(6),
            rng.randrange(4),
            rng.choice([0.0, 0.0, 0.1, 0.25, 0.5]),
            rng.random() < 0.25,
            rng.random() < 0.4,
            rng.random() < 0.4,
            rng.choice(FIRST_NAMES) if rng.random() < 0.1 else "",
            rng.choice([0.0, 0.0, 0.2, 0.5, 0.8]),
            rng.random() < 0.35,
            rng.choice([0.0, 0.1, 0.3]),
        )

    def habit(self, usual: int, count: int) -> int:
        """The usual form, or now and then another."""
        return self.rng.randrange(count) if self.rng.random() < self.wander else usual

    def guard(self, params: list[str]) -> list[str]:
        """The checks and conversions a careful student starts a function with."""
        arrays = [p for p in params if p in ARRAYS]
        if not arrays or self.rng.random() >= self.careful:
            return []
        p = self.rng.choice(arrays)
        options = [
            f"{p} = np.asarray({p})",
            f"{p} = np.asarray({p}, dtype=float)",
            f"assert np.all(np.isfinite({p})) or True",
        ]
        if p not in ("x", "shares", "d_shares"):  # these may have one axis only
            options += [f"assert {p}.ndim >= 2", f"*batch, rows_, cols_ = np.shape({p})",
                        f"if np.ndim({p}) < 2:\n    raise ValueError('need at least 2 axes')"]  # fmt: skip
        return [
            line
            for option in self.rng.sample(options, self.rng.choice([1, 1, 2]))
            for line in option.split("\n")
        ]

    def n(self, role: str) -> str:
        return self.names[role]

    def t(self, a: str) -> str:
        """a with its last two axes swapped."""
        if self.helpers:
            return f"_t({a})"
        return [f"np.swapaxes({a}, -1, -2)", f"np.swapaxes({a}, -2, -1)", f"{a}.swapaxes(-1, -2)", f"np.moveaxis({a}, -1, -2)",
                f"np.swapaxes({a}, {a}.ndim - 1, {a}.ndim - 2)"][self.habit(self.transpose, 5)]  # fmt: skip

    def mm(self, a: str, b: str) -> str:
        return [f"{a} @ {b}", f"np.matmul({a}, {b})", f"{a} @ {b}"][self.habit(self.product, 3)]

    def sqrt(self, d: str) -> str:
        return [f"np.sqrt({d})", f"math.sqrt({d})", f"{d} ** 0.5", f"np.sqrt(float({d}))"][
            self.habit(self.root, 4)
        ]

    def sum(self, a: str) -> str:
        form = self.habit(self.rowsum, 6)
        # a method of an expression needs its brackets
        a = f"({a})" if " " in a and form in (1, 2, 4, 5) else a
        return [f"np.sum({a}, axis=-1, keepdims=True)", f"{a}.sum(axis=-1, keepdims=True)", f"{a}.sum(-1, keepdims=True)",
                f"np.sum({a}, -1, keepdims=True)", f"{a}.sum(axis=-1)[..., None]", f"np.expand_dims({a}.sum(axis=-1), -1)"][form]  # fmt: skip

    def max(self, a: str) -> str:
        form = self.habit(self.rowmax, 4)
        a = f"({a})" if " " in a and form in (1, 2) else a
        return [f"np.max({a}, axis=-1, keepdims=True)", f"{a}.max(axis=-1, keepdims=True)", f"{a}.max(-1, keepdims=True)",
                f"np.amax({a}, axis=-1, keepdims=True)"][form]  # fmt: skip

    def comment(self, line: str) -> str:
        """The line, sometimes with a comment of the student's after it."""
        if self.rng.random() >= self.comments or line.rstrip().endswith(":"):
            return line
        words = self.rng.choice(COMMENTS + SHAPES)
        if self.own and self.rng.random() < 0.2:
            words = f"{self.own}: {words}"
        return f"{line}  # {words}"


def scores(st: Style, mistake: str = "") -> list[str]:
    d, s = st.n("d"), st.n("scores")
    k_t = st.t("k")
    scale = (
        ""
        if mistake == "no_scale"
        else f" / {d}"
        if mistake == "divides_by_d"
        else f" / {st.sqrt(d)}"
    )
    size = (
        "q.shape[-2]" if mistake == "sqrt_of_T" else st.rng.choice(["q.shape[-1]", "k.shape[-1]"])
    )
    way = st.rng.choice(["matmul"] * 5 + ["einsum"] * 2 + ["broadcast", "scaled_q"])
    first = [f"{d} = {size}"]
    if way == "einsum":
        spec = st.rng.choice(
            ['"...td,...sd->...ts"', '"...id,...jd->...ij"', '"...qd,...kd->...qk"']
        )
        body = [f"{s} = np.einsum({spec}, q, k){scale}"]
    elif way == "broadcast":
        body = [f"{s} = (q[..., :, None, :] * k[..., None, :, :]).sum(axis=-1){scale}"]
    elif way == "scaled_q" and scale:
        body = [f"{s} = {st.mm(f'(q{scale})', k_t)}"]
    elif st.verbose:
        body = [f"k_t = {k_t}", f"raw = {st.mm('q', 'k_t')}", f"{s} = raw{scale}"]
    else:
        body = [f"{s} = {st.mm('q', k_t)}{scale}"]
    if mistake == "transposed":
        body = [f"{s} = {st.mm('k', st.t('q'))}{scale}"]
    if st.inline and len(body) == 1:
        return [*first, f"return {body[0].split(' = ', 1)[1]}"]
    return [*first, *body, f"return {s}"]


def causal_mask(st: Style, mistake: str = "") -> list[str]:
    m, i = st.n("mask"), st.n("idx")
    op = ">" if mistake == "hides_diagonal" else ">="
    tril = "np.triu" if mistake == "wrong_triangle" else "np.tril"
    diagonal = ", k=-1" if mistake == "hides_diagonal" else ""
    dtype = (
        ""
        if mistake == "int_mask"
        else st.rng.choice([", dtype=bool", ", bool", ", dtype=np.bool_"])
    )
    # fmt: skip
    ways = {
        "tril": [f"return {tril}(np.ones((T, T){dtype}){diagonal})"],
        "tri": [f"return np.tri(T{', k=-1' if diagonal else ''}{', dtype=bool' if dtype else ''})"]
        if tril == "np.tril"
        else [f"return {tril}(np.ones((T, T){dtype}))"],
        "arange": [f"{i} = np.arange(T)", f"return {i}[:, None] {op} {i}[None, :]"],
        "reshape": [f"{i} = np.arange(T)", f"return {i}.reshape(-1, 1) {op} {i}.reshape(1, -1)"],
        "loops": [
            f"{m} = np.zeros((T, T){dtype or ', dtype=int'})",
            "for row in range(T):",
            f"    {m}[row, : row{'' if op == '>' else ' + 1'}] = True",
            f"return {m}",
        ],
    }
    if mistake == "wrong_triangle":
        ways["arange"][-1] = ways["arange"][-1].replace(op, "<=")
        ways["reshape"][-1] = ways["reshape"][-1].replace(op, "<=")
        ways["loops"][-2] = f"    {m}[row, row:] = True"
    return ways[st.rng.choice(["tril"] * 4 + ["tri", "arange", "arange", "reshape", "loops"])]


def apply_causal_mask(st: Style, mistake: str = "") -> list[str]:
    m, out = st.n("mask"), st.n("out")
    fill = {"fills_zero": "0.0", "large_negative": "-1e9"}.get(
        mistake, st.rng.choice(["-np.inf", "-np.inf", "float('-inf')", "-math.inf"])
    )
    first = [
        st.rng.choice(["T = scores.shape[-1]", "T = scores.shape[-2]"]),
        f"{m} = causal_mask(T)",
    ]
    if mistake == "in_place":
        return [*first, f"scores[..., ~{m}] = {fill}", "return scores"]
    way = st.rng.choice(["where"] * 5 + ["where_not", "copy", "copy", "full"])
    if way == "where":
        return [*first, f"return np.where({m}, scores, {fill})"]
    if way == "where_not":
        return [*first, f"return np.where(~{m}, {fill}, scores)"]
    if way == "copy":
        made = st.rng.choice(
            [
                "scores.copy()",
                "np.array(scores, dtype=float)",
                "scores.astype(float)",
                "np.copy(scores)",
            ]
        )
        return [*first, f"{out} = {made}", f"{out}[..., ~{m}] = {fill}", f"return {out}"]
    return [
        *first,
        f"{out} = np.full(scores.shape, {fill})",
        f"{out}[..., {m}] = scores[..., {m}]",
        f"return {out}",
    ]


def softmax(st: Style, mistake: str = "") -> list[str]:
    top, e, total = st.n("top"), st.n("e"), st.n("total")
    if top == total:
        total = "denominator"
    axis_sum = st.sum(e)
    if mistake == "wrong_axis":
        axis_sum = f"np.sum({e}, axis=0, keepdims=True)"
    elif mistake == "whole_array":
        axis_sum = f"np.sum({e})"
    quiet = st.rng.choice(
        ['over="ignore"', 'over="ignore"', 'all="ignore"', 'over="ignore", under="ignore"']
    )
    find_top = f"{top} = {'np.max(x)' if mistake == 'global_max' else st.max('x')}"
    shifted = "x" if mistake == "no_max_shift" else f"x - {top}"
    if st.rng.random() < 0.2 and mistake == "":
        lse = st.rng.choice(["lse", "log_z", "logsum"])
        return [find_top, f"with np.errstate({quiet}):", f"    {lse} = {top} + np.log({st.sum(f'np.exp(x - {top})')})",
                f"    return np.exp(x - {lse})"]  # fmt: skip
    lines = [find_top] if mistake != "no_max_shift" else []
    if st.verbose and mistake != "no_max_shift":
        lines += [
            f"with np.errstate({quiet}):",
            f"    shifted = {shifted}",
            f"    {e} = np.exp(shifted)",
        ]
    else:
        lines += [f"with np.errstate({quiet}):", f"    {e} = np.exp({shifted})"]
    below = f"({axis_sum} + 1e-9)" if mistake == "epsilon_below" else axis_sum
    if st.inline:
        return [*lines, f"return {e} / {below}"]
    return [
        *lines,
        f"{total} = {below}",
        st.rng.choice([f"return {e} / {total}", f"return np.divide({e}, {total})"]),
    ]


def attention_head(st: Style, mistake: str = "") -> list[str]:
    sh, out = st.n("shares"), st.n("out")
    proj = st.rng.choice(
        [
            "{x} @ {w}",
            "np.matmul({x}, {w})",
            "np.einsum('...tc,cd->...td', {x}, {w})",
            "np.dot({x}, {w})",
        ]
    )
    if st.helpers:
        proj = "_project({x}, {w})"
    wk = "w_q" if mistake == "keys_from_wq" else "w_k"
    wv = "w_k" if mistake == "values_from_wk" else "w_v"
    q, k, v = (proj.format(x="x", w=w) for w in ("w_q", wk, wv))
    lines = [f"q, k, v = {q}, {k}, {v}"] if st.tuples else [f"q = {q}", f"k = {k}", f"v = {v}"]
    if mistake == "scores_by_sqrt_C":
        scores_of = f"{st.mm('q', st.t('k'))} / np.sqrt(x.shape[-1])"
    else:
        scores_of = "attention_scores(q, k)"
    masked = scores_of if mistake == "no_mask" else f"apply_causal_mask({scores_of})"
    if st.inline:
        lines.append(f"{sh} = softmax({masked})")
    else:
        lines += (
            [f"{sh} = {scores_of}"]
            + ([] if mistake == "no_mask" else [f"{sh} = apply_causal_mask({sh})"])
            + [f"{sh} = softmax({sh})"]
        )
    result = st.rng.choice([st.mm(sh, "v"), f"np.einsum('...ts,...sd->...td', {sh}, v)"])
    given = st.t(sh) if mistake == "shares_transposed" else sh
    if st.inline:
        return [*lines, f"return {result}, {given}"]
    return [
        *lines,
        f"{out} = {result}",
        st.rng.choice([f"return {out}, {given}", f"return ({out}, {given})"]),
    ]


def multi_head_attention(st: Style, mistake: str = "") -> list[str]:
    outs, shares, out, sh, joined = (
        st.n("outs"),
        st.n("all_shares"),
        st.n("out"),
        st.n("shares"),
        st.n("joined"),
    )
    if shares == outs or sh == shares:
        shares = "maps"
    order = "reversed(heads)" if mistake == "reverse_order" else "heads"
    axis = "0" if mistake == "concat_first_axis" else st.rng.choice(["-1", "-1", "axis=-1"])
    way = st.rng.choice(["loop", "loop", "loop_star", "comprehension", "zip", "stack"])
    if way == "loop":
        lines = [f"{outs}, {shares} = [], []", f"for w_q, w_k, w_v in {order}:", f"    {out}, {sh} = attention_head(x, w_q, w_k, w_v)",
                 f"    {outs}.append({out})", f"    {shares}.append({sh})"]  # fmt: skip
    elif way == "loop_star":
        lines = [f"{outs} = []", f"{shares} = []", f"for head in {order}:", f"    {out}, {sh} = attention_head(x, *head)",
                 f"    {outs}.append({out})", f"    {shares}.append({sh})"]  # fmt: skip
    elif way == "comprehension":
        lines = [f"computed = [attention_head(x, *head) for head in {order}]", f"{outs} = [r[0] for r in computed]",
                 f"{shares} = [r[1] for r in computed]"]  # fmt: skip
    else:
        lines = [
            f"{outs}, {shares} = zip(*[attention_head(x, w_q, w_k, w_v) for w_q, w_k, w_v in {order}])",
            f"{shares} = list({shares})",
        ]
    if mistake == "interleaved":
        lines.append(f"{joined} = np.stack({outs}, axis=-1).reshape(*{outs}[0].shape[:-1], -1)")
    elif way == "stack" and mistake == "":
        lines.append(f"{joined} = np.stack({outs}, axis=-2).reshape(*{outs}[0].shape[:-1], -1)")
    else:
        lines.append(f"{joined} = np.concatenate({outs}, {axis})")
    if mistake == "no_w_o":
        return [*lines, f"return {joined}, {shares}"]
    return [*lines, f"return {st.mm(joined, 'w_o')}, {shares}"]


def softmax_backward(st: Style, mistake: str = "") -> list[str]:
    dot = st.n("dot")
    if mistake == "softmax_backward_no_subtract":
        return ["return shares * d_shares"]
    summed = st.sum("d_shares * shares")
    if mistake == "softmax_backward_wrong_axis":
        summed = "np.sum(d_shares * shares, axis=0, keepdims=True)"
    way = st.rng.choice(["dot", "dot", "dot", "expanded", "einsum", "jacobian"])
    if mistake:
        way = "dot"
    if way == "expanded":
        return [
            f"{dot} = {st.sum('shares * d_shares')}",
            f"return shares * d_shares - shares * {dot}",
        ]
    if way == "einsum":
        return [
            f"{dot} = np.einsum('...i,...i->...', shares, d_shares)[..., None]",
            f"return shares * (d_shares - {dot})",
        ]
    if way == "jacobian":
        return ["S = shares.shape[-1]", "jac = shares[..., :, None] * np.eye(S) - shares[..., :, None] * shares[..., None, :]",
                "return np.einsum('...ij,...i->...j', jac, d_shares)"]  # fmt: skip
    return [f"{dot} = {summed}", f"return shares * (d_shares - {dot})"]


def attention_head_backward(st: Style, mistake: str = "") -> list[str]:
    sh, d, rows = st.n("shares"), st.n("d"), st.n("rows")
    r = st.rng
    proj = (
        ["x @ w_q", "x @ w_k", "x @ w_v"]
        if st.product != 1
        else ["np.matmul(x, w_q)", "np.matmul(x, w_k)", "np.matmul(x, w_v)"]
    )
    lines = (
        [f"q, k, v = {', '.join(proj)}"]
        if st.tuples
        else [f"{n} = {p}" for n, p in zip("qkv", proj)]
    )
    lines += [f"{sh} = softmax(apply_causal_mask(attention_scores(q, k)))"] if st.inline else [
        f"{sh} = attention_scores(q, k)", f"{sh} = apply_causal_mask({sh})", f"{sh} = softmax({sh})"]  # fmt: skip
    d_v = f"d_v = {st.mm(st.t(sh), 'd_out')}"
    d_shares = f"d_shares = {st.mm('d_out', st.t('v'))}"
    lines += [d_v, d_shares] if r.random() < 0.6 else [d_shares, d_v]
    lines.append(
        f"{d} = {r.choice(['q.shape[-1]', 'w_q.shape[1]', 'k.shape[-1]', 'w_k.shape[-1]'])}"
    )
    through = (
        "d_shares"
        if mistake == "head_backward_skips_softmax"
        else f"softmax_backward({sh}, d_shares)"
    )
    scale = "" if mistake == "head_backward_no_scale" else f" / {st.sqrt(d)}"
    lines.append(f"d_scores = {through}{scale}")
    d_q, d_k = f"d_q = {st.mm('d_scores', 'k')}", f"d_k = {st.mm(st.t('d_scores'), 'q')}"
    lines += [d_q, d_k] if r.random() < 0.7 else [d_k, d_q]
    tw = r.choice(["{w}.T", "np.transpose({w})", "{w}.swapaxes(0, 1)"])
    terms = [
        f"{st.mm(g, tw.format(w=w))}" for g, w in (("d_q", "w_q"), ("d_k", "w_k"), ("d_v", "w_v"))
    ]
    if mistake == "head_backward_no_key_path":
        terms.pop(1)
    lines.append(f"d_x = {' + '.join(terms)}")
    way = r.choice(["reshape", "reshape", "tensordot", "einsum", "summed"])
    if mistake == "head_backward_weights_per_batch":
        lines += [f"d_w_{n} = {st.mm(st.t('x'), f'd_{n}')}" for n in "qkv"]
    elif way == "reshape":
        lines.append(f"{rows} = x.reshape(-1, x.shape[-1])")
        lines += [
            f"d_w_{n} = {st.mm(f'{rows}.T', f'd_{n}.reshape(-1, d_{n}.shape[-1])')}" for n in "qkv"
        ]
    elif way == "tensordot":
        lines.append("batch = list(range(x.ndim - 1))")
        lines += [f"d_w_{n} = np.tensordot(x, d_{n}, axes=(batch, batch))" for n in "qkv"]
    elif way == "einsum":
        lines += [
            f"d_w_{n} = np.einsum('ic,id->cd', x.reshape(-1, x.shape[-1]), d_{n}.reshape(-1, d_{n}.shape[-1]))"
            for n in "qkv"
        ]
    else:
        lines += [
            f"d_w_{n} = np.sum({st.mm(st.t('x'), f'd_{n}')}, axis=tuple(range(x.ndim - 2)))"
            for n in "qkv"
        ]
    return [*lines, "return d_x, d_w_q, d_w_k, d_w_v"]


def sgd_step(st: Style, mistake: str = "") -> list[str]:
    n = st.n("name")
    sign = "+" if mistake == "sgd_climbs" else "-"
    names = "list(params)[:8]" if mistake == "sgd_first_eight" else "params"
    step = st.rng.choice(["lr * {g}", "{g} * lr"])
    if mistake == "sgd_local_name":
        return [
            f"for {n} in params:",
            f"    value = params[{n}]",
            f"    value = value {sign} {step.format(g=f'grads[{n}]')}",
        ]
    way = st.rng.choice(["assign", "assign", "in_place", "items_grads", "items_params", "update"])
    if mistake or way == "assign":
        return [
            f"for {n} in {names}:",
            f"    params[{n}] = params[{n}] {sign} {step.format(g=f'grads[{n}]')}",
        ]
    if way == "in_place":
        return [f"for {n} in params:", f"    params[{n}] {sign}= {step.format(g=f'grads[{n}]')}"]
    if way == "items_grads":
        return [
            f"for {n}, g in grads.items():",
            f"    params[{n}] = params[{n}] - {step.format(g='g')}",
        ]
    if way == "items_params":
        return [
            f"for {n}, value in params.items():",
            f"    params[{n}] = value - {step.format(g=f'grads[{n}]')}",
        ]
    return [
        f"params.update({{{n}: value - {step.format(g=f'grads[{n}]')} for {n}, value in params.items()}})"
    ]


def train(st: Style, mistake: str = "") -> list[str]:
    ls, i = st.n("losses"), st.n("step")
    count = {"train_extra_step": "steps + 1", "train_caps_steps": "min(steps, 100)"}.get(
        mistake, "steps"
    )
    fetch = "x, y = next(batches)"
    update = [] if mistake == "train_no_step" else ["sgd_step(model.params, grads, lr)"]
    record = st.rng.choice([f"{ls}.append(float(loss))", f"{ls} += [float(loss)]"])
    body = ["loss, grads = model.loss_and_grads(x, y)", *update, record]
    way = st.rng.choice(["for", "for", "for", "zip", "while"])
    if mistake == "train_one_batch":
        return [
            f"{ls} = []",
            fetch,
            f"for {i} in range({count}):",
            *(f"    {b}" for b in body),
            f"return {ls}",
        ]
    if way == "zip" and not mistake:
        return [
            f"{ls} = []",
            f"for {i}, (x, y) in zip(range({count}), batches):",
            *(f"    {b}" for b in body),
            f"return {ls}",
        ]
    if way == "while" and not mistake:
        return [
            f"{ls} = []",
            f"while len({ls}) < {count}:",
            f"    {fetch}",
            *(f"    {b}" for b in body),
            f"return {ls}",
        ]
    tail = [f"return {ls}[::-1]"] if mistake == "train_reversed" else [f"return {ls}"]
    return [
        f"{ls} = []",
        f"for {i} in range({count}):",
        f"    {fetch}",
        *(f"    {b}" for b in body),
        *tail,
    ]


WRITERS = {f.__name__: f for f in (scores, causal_mask, apply_causal_mask, softmax, attention_head, multi_head_attention,
                                   softmax_backward, attention_head_backward, sgd_step, train)}  # fmt: skip
WRITERS["attention_scores"] = WRITERS.pop("scores")
MISTAKES = {  # function -> the mistakes of tests/mutants/wrong/ its writer makes
    "attention_scores": ["no_scale", "divides_by_d", "sqrt_of_T", "transposed"],
    "causal_mask": ["hides_diagonal", "wrong_triangle", "int_mask"],
    "apply_causal_mask": ["fills_zero", "large_negative", "in_place"],
    "softmax": ["no_max_shift", "wrong_axis", "global_max", "whole_array", "epsilon_below"],
    "attention_head": [
        "no_mask",
        "keys_from_wq",
        "values_from_wk",
        "shares_transposed",
        "scores_by_sqrt_C",
    ],
    "multi_head_attention": ["reverse_order", "concat_first_axis", "interleaved", "no_w_o"],
    "softmax_backward": ["softmax_backward_no_subtract", "softmax_backward_wrong_axis"],
    "attention_head_backward": [
        "head_backward_no_scale",
        "head_backward_skips_softmax",
        "head_backward_weights_per_batch",
        "head_backward_no_key_path",
    ],
    "sgd_step": ["sgd_climbs", "sgd_first_eight", "sgd_local_name"],
    "train": [
        "train_extra_step",
        "train_caps_steps",
        "train_no_step",
        "train_one_batch",
        "train_reversed",
    ],
}
HELPERS = {  # what a student who writes helpers puts at the top of a module whose functions use them
    "_t(": ["def _t(a):", "    return np.swapaxes(a, -1, -2)"],
    "_project(": ["def _project(x, w):", "    return x @ w"],
}
