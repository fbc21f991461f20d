"""What `grader compare` shows: the gate's message, progress bars, and the side-by-side report."""

import math
import sys

from grader import kit
from grader.compare.corpus import DECISION_CUE, check_reply
from grader.exercises import BY_NAME
from grader.style import mark, paint, shown_command

# the lesson's figures: p_decision, correct of 100
LESSON = {"mlp": (0.50, 38), "attention": (0.86, 90)}
LABELS = {
    "mlp": "8-character MLP",
    "attention": "MLP + your head",
    "attention_no_mask": "head, no mask",
}
REFERENCE_LABELS = {**LABELS, "attention": "MLP + reference head"}  # grader compare --solutions
BARS = "▁▂▃▄▅▆▇█"
PLAIN_BARS = ".:-=+*#@"
MAP_WIDTH = 64  # characters of the reply shown before the decision
CURVE_WIDTH = 48


def labels(result: dict) -> dict:
    """The models' names: the student's head, or with --solutions the reference's."""
    return REFERENCE_LABELS if result.get("functions") == "reference" else LABELS


def whose(result: dict) -> str:
    """Whose functions the models are built from, as the start of a noun phrase."""
    return "the reference" if result.get("functions") == "reference" else "your"


def locked(left: list, where: tuple[str, ...] = ()) -> str:
    """Why compare will not run yet, and what to do."""
    states = {
        "failed": "fails",
        "not_started": "not started",
        "error": "crashes or cannot be imported",
    }
    which = " its public checks" if kit.is_student_kit() else ""
    lines = [f"grader compare unlocks once every exercise passes{which}. Still to do:"]
    names = {e.name for e in left}
    for e in left:
        # an earlier exercise is the cause
        causes = [used for used in BY_NAME[e.name].uses if used in names]
        cause = f" (it uses {causes[0]}, listed here too: fix {causes[0]} first)" if causes else ""
        lines.append(f"  {mark(e.status)} {e.name}: {states.get(e.status, e.status)}{cause}")
    lines.append(f"Next: {shown_command('check', left[0].name, *where)}")
    return "\n".join(lines)


def fancy(stream=None) -> bool:
    """True when the stream can show the block characters."""
    try:
        BARS.encode((stream or sys.stdout).encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class Progress:
    """Progress bars on stderr while the models train, shown only on a terminal."""

    def __init__(self, stream=None, names: dict = LABELS, said: str = "Training the models..."):
        self.stream, self.names = stream or sys.stderr, names
        self.on = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.open = False
        if not self.on:
            print(said, file=self.stream)

    def update(self, event: dict):
        """Redraw the current line for a progress, status or model event."""
        if not self.on:
            return
        label = f"  {self.names.get(event['model'], event['model']):<20}"
        if event["event"] == "progress":
            done = event["step"] / event["steps"]
            bar = "#" * round(24 * done) + "-" * (24 - round(24 * done))
            self.draw(
                f"{label} [{bar}] {event['step']:>4}/{event['steps']}  loss {event['loss']:.3f}"
            )
        elif event["event"] == "status":
            self.draw(f"{label} {event['text']}...")
        else:
            self.draw(f"{label} trained in {event['train_seconds']:.1f} s")
            self.stream.write("\n")
            self.open = False

    def draw(self, text: str):
        """Replace the current line."""
        self.stream.write("\r" + text + "\033[K")
        self.stream.flush()
        self.open = True

    def close(self):
        """End a half-drawn line."""
        if self.open:
            self.stream.write("\n")
            self.open = False


def report(result: dict, models: dict) -> str:
    """The whole terminal report."""
    figures = result["models"]
    names, who = labels(result), whose(result)
    parts = [table(result, models), notes(result), replies(models, names)]
    if "attention_map" in models.get("attention", {}):
        parts.append(attention_map(models["attention"]["attention_map"], who))
    parts.append(curves(models, names))
    if "attention_no_mask" in figures:
        parts.append(no_mask(figures, models, who))
    return "\n\n".join(parts)


def decision_loss(event: dict) -> str:
    """The mean loss at the decision character, -log p(right decision), from a model's event; blank without one."""
    probs = [p for p in event.get("decision_probs", ()) if isinstance(p, (int, float))]
    if not probs:
        return ""
    return f"{-sum(math.log(max(p, 1e-12)) for p in probs) / len(probs):.3f}"


def table(result: dict, models: dict | None = None) -> str:
    """Both models' figures, the kit's beside the lesson's; with the models' events, the loss at the decision too."""
    figures, names = result["models"], list(result["models"])
    head = f"{'':<40}" + "".join(f"{labels(result)[n]:<22}" for n in names)
    sub = f"{'':<40}" + "".join(f"{'kit':<8}{'lesson' if n in LESSON else '':<14}" for n in names)

    def row(title, cells):
        return f"{title:<39} " + "".join(f"{a:<8}{b:<14}" for a, b in cells)

    lesson = {n: LESSON.get(n, ("", "")) for n in names}
    rows = [
        row(
            f'p(right decision after "{DECISION_CUE}")',
            [
                (f"{figures[n]['p_decision']:.2f}", f"{lesson[n][0]:.2f}" if n in LESSON else "")
                for n in names
            ],
        ),
        row(
            f"correct replies of {figures[names[0]]['sampled_replies']}",
            [(figures[n]["correct_replies"], lesson[n][1]) for n in names],
        ),
        row(
            "loss at the end, over every character",
            [(f"{figures[n]['final_loss']:.3f}", "") for n in names],
        ),
        *(
            [
                row(
                    "loss at the decision character alone",
                    [(decision_loss(models.get(n, {})), "") for n in names],
                )
            ]
            if models and any(decision_loss(models.get(n, {})) for n in names)
            else []
        ),
        f"{'training steps (seconds)':<40}" + "".join(f"{spent(figures[n]):<22}" for n in names),
    ]
    title = paint(f"The comparison, seed {result['seed']} ({result['seconds']:.0f} s)", bold=True)
    return "\n".join([title, "", paint(head, bold=True), sub, *rows])


def spent(figures: dict) -> str:
    """Steps and seconds of one model's training."""
    return f"{figures['steps']} ({figures['train_seconds']:.0f} s)"


def notes(result: dict) -> str:
    """Why the figures are what they are, and how the models were trained."""
    who = whose(result)
    return "\n".join(
        [
            'The MLP sees only the last 8 characters, always "dow, so ": it can only guess "past" or "within".',
            f"{who.capitalize()} head reads the condition 26-29 characters back.",
            "Why the kit's attention figure beats the lesson's 0.86: a well-trained head is nearly sure, and at",
            "temperature 1 a reply is right about as often as that probability, so 0.86 and 90 of 100 cannot both hold.",
            f"Training: {who} train and sgd_step make every update, but the kit's models hand sgd_step Adam's",
            "step direction (cosine schedule) in place of the raw gradient; the attention model starts from the",
            "trained MLP.",
        ]
    )


def replies(models: dict, names: dict = LABELS) -> str:
    """One sampled reply of each model, marked right or wrong."""
    lines = ["One reply of each, written at temperature 1:"]
    for name, event in models.items():
        text = event["replies"][0]
        verdict = check_reply(text)
        lines.append(
            f"  {names[name]:<20} {mark('passed' if verdict.correct else 'failed')} {text}"
        )
    return "\n".join(lines)


def attention_map(picture: dict, who: str = "your") -> str:
    """Where the head looks when it must write the decision, as a bar under each character."""
    text, shares = picture["text"], picture["shares"]
    start = max(0, len(text) - MAP_WIDTH)
    top = max(shares + [picture["start_share"]])
    bars = BARS if fancy() else PLAIN_BARS
    row = "".join(
        " " if s < top / 16 else bars[min(len(bars) - 1, int(s / top * len(bars)))]
        for s in shares[start:]
    )
    dots = "..." if start else ""
    lines = [
        f"Where {who} head looks as it is about to write the decision (a held-out reply):",
        f"  {dots}{text[start:]}_",
        f"  {' ' * len(dots)}{row}",
        "  reads most: "
        + ", ".join(
            f'"{word}" {share:.0%}'
            for word, share in most_read(text, shares, picture["start_share"])
        ),
    ]
    return "\n".join(lines)


def most_read(
    text: str, shares: list[float], start_share: float, n: int = 3
) -> list[tuple[str, float]]:
    """The n words (and the start token) the head gives the largest total share."""
    totals, word, total = [("(start)", start_share)], "", 0.0
    for char, share in zip(text + " ", shares + [0.0]):
        if char == " ":
            if word:
                totals.append((word, total))
            word, total = "", 0.0
        else:
            word, total = word + char, total + share
    return sorted(totals, key=lambda item: -item[1])[:n]


def curves(models: dict, names: dict = LABELS) -> str:
    """The training losses as sparklines on one log scale, one column per the same number of steps."""
    losses = {name: event["losses"] for name, event in models.items()}
    low = math.log(min(min(v) for v in losses.values()))
    high = math.log(max(max(v) for v in losses.values()))
    per_column = max(1, math.ceil(max(len(v) for v in losses.values()) / CURVE_WIDTH))
    bars = BARS if fancy() else PLAIN_BARS
    lines = [
        f"Training loss, log scale from {math.exp(low):.3f} to {math.exp(high):.2f} ({per_column} step{'s' if per_column > 1 else ''} a column):"
    ]
    for name, values in losses.items():
        columns = [values[i : i + per_column] for i in range(0, len(values), per_column)]
        levels = [(math.log(sum(c) / len(c)) - low) / max(high - low, 1e-9) for c in columns]
        line = "".join(bars[min(len(bars) - 1, int(level * len(bars)))] for level in levels)
        lines.append(
            f"  {names[name]:<20} {values[0]:>6.3f} {line} {sum(values[-50:]) / len(values[-50:]):.3f}"
        )
    return "\n".join(lines)


def no_mask(figures: dict, models: dict, who: str = "your") -> str:
    """The lesson's warning, shown: a head without the mask learns to copy, then cannot write."""
    masked, unmasked = figures["attention"], figures["attention_no_mask"]
    broken = [r for r in models["attention_no_mask"]["replies"] if not check_reply(r).correct][:2]
    lines = [
        f"Without the causal mask ({who} head with its apply_causal_mask replaced by the identity) the training loss fell to "
        f"{unmasked['final_loss']:.3f},",
        f"against {masked['final_loss']:.3f} with it. Too good: every position could read the character it had to guess",
        f"(its p_decision of {unmasked['p_decision']:.2f} is too good for the same reason: it reads the held-out reply's next character).",
        f"Writing a reply there is no next character to read, and {unmasked['sampled_replies'] - unmasked['correct_replies']}"
        f" of {unmasked['sampled_replies']} replies came out wrong, e.g.:",
    ]
    lines += [f"  {r}" for r in broken]
    lines.append("The same command without --no-mask trains the two models alone.")
    return "\n".join(lines)
