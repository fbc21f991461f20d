"""The replies corpus: a small grammar of returns-desk replies, its generator and its checker."""

import argparse
import random
import re
from dataclasses import dataclass
from pathlib import Path
from string import Formatter

from grader.paths import DATA_DIR

SPLITS = {"train": (4000, 0), "valid": (500, 1)}  # split -> (replies, seed)

GREETINGS = ("hi", "hello", "dear")
NAMES = (
    "anna",
    "ben",
    "carla",
    "david",
    "emma",
    "felix",
    "grace",
    "hugo",
    "iris",
    "jonas",
    "kate",
    "leo",
    "maria",
    "nina",
    "omar",
    "paul",
)
ITEMS = (
    "jacket",
    "boots",
    "lamp",
    "kettle",
    "scarf",
    "backpack",
    "blender",
    "speaker",
    "mug",
    "rug",
)
# acknowledgement -> its probability; the two order ones end alike in "r #" and five digits,
# then go on differently: the second blind spot.
ACKS = {
    "": 0.3,
    "thanks for sending back the {item}. ": 0.3,
    "thanks for your order #{number}. ": 0.2,
    "sorry about order #{number} and the wait. ": 0.2,
}
SUBJECTS = ("your return", "this parcel", "the item", "the box")
DAYS = (7, 14, 30, 60, 90)
DECISIONS = {"accept": "we will take it back", "refuse": "sadly we cannot take it back"}
VERDICTS = {"within": "accept", "past": "refuse"}
CLOSINGS = ("have a good day", "kind regards", "best wishes", "take care")

DECISION_CUE = "window, so "
CONDITIONS = {condition: DECISIONS[verdict][0] for condition, verdict in VERDICTS.items()}
TEMPLATE = "{greeting} {name}, {ack}{subject} is {condition} the {days}-day window, so {decision}. {closing}."


def _regex(template: str, **slots: str) -> str:
    """`template` as a regular expression, each {field} replaced by the pattern in `slots`."""
    return "".join(
        re.escape(literal) + (slots[field] if field else "")
        for literal, field, _, _ in Formatter().parse(template)
    )


def _one_of(name: str, options) -> str:
    """A named group matching exactly one of `options`."""
    return f"(?P<{name}>" + "|".join(re.escape(str(option)) for option in options) + ")"


_ACK = (
    "(?P<ack>"
    + "|".join(_regex(ack, item=_one_of("item", ITEMS), number="[0-9]{5}") for ack in ACKS if ack)
    + ")?"
)
REPLY_RE = re.compile(
    _regex(
        TEMPLATE,
        greeting=_one_of("greeting", GREETINGS),
        name=_one_of("name", NAMES),
        ack=_ACK,
        subject=_one_of("subject", SUBJECTS),
        condition=_one_of("condition", VERDICTS),
        days=_one_of("days", DAYS),
        decision=_one_of("decision", DECISIONS.values()),
        closing=_one_of("closing", CLOSINGS),
    )
)
_TEXTS = (
    TEMPLATE,
    *ACKS,
    *GREETINGS,
    *NAMES,
    *ITEMS,
    *SUBJECTS,
    *VERDICTS,
    *DECISIONS.values(),
    *CLOSINGS,
    "0123456789",
)
ALPHABET = "".join(sorted(set(re.sub(r"\{\w*\}", "", "".join(_TEXTS)))))


@dataclass(frozen=True)
class ReplyCheck:
    """What the checker says of one string."""

    well_formed: bool
    condition: str | None = None
    decision: str | None = None

    @property
    def correct(self) -> bool:
        """Well formed, and the decision is the one its condition calls for."""
        return self.well_formed and VERDICTS[self.condition] == self.decision


def check_reply(text: str) -> ReplyCheck:
    """Whether `text` is a reply of the grammar, and its condition and decision if so."""
    match = REPLY_RE.fullmatch(text)
    if match is None:
        return ReplyCheck(False)
    decision = next(name for name, words in DECISIONS.items() if words == match["decision"])
    return ReplyCheck(True, match["condition"], decision)


def decision_positions(text: str) -> int | None:
    """Index of the first character after DECISION_CUE, or None without the cue."""
    at = text.find(DECISION_CUE)
    return None if at < 0 else at + len(DECISION_CUE)


def _reply(rng: random.Random) -> str:
    """One reply drawn from the grammar."""
    greeting, name = rng.choice(GREETINGS), rng.choice(NAMES)
    ack = rng.choices(list(ACKS), weights=list(ACKS.values()))[0]
    ack = ack.format(item=rng.choice(ITEMS), number=f"{rng.randrange(10**5):05d}")
    subject = rng.choice(SUBJECTS)
    condition = "past" if rng.random() < 0.5 else "within"
    days, closing = rng.choice(DAYS), rng.choice(CLOSINGS)
    return TEMPLATE.format(
        greeting=greeting,
        name=name,
        ack=ack,
        subject=subject,
        condition=condition,
        days=days,
        decision=DECISIONS[VERDICTS[condition]],
        closing=closing,
    )


def generate(n: int, seed: int) -> list[str]:
    """`n` replies, the same ones for the same seed."""
    rng = random.Random(seed)
    return [_reply(rng) for _ in range(n)]


def write_corpus(folder: str | Path = DATA_DIR) -> list[Path]:
    """Write train.txt and valid.txt, one reply per line, into `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for split, (n, seed) in SPLITS.items():
        path = folder / f"{split}.txt"
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.writelines(reply + "\n" for reply in generate(n, seed))
        paths.append(path)
    return paths


def load_replies(split: str, folder: str | Path | None = None) -> list[str]:
    """The replies of one split ("train" or "valid"), from `folder` or the kit's data/."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {sorted(SPLITS)}, not {split!r}")
    path = Path(folder if folder is not None else DATA_DIR) / f"{split}.txt"
    if not path.is_file():
        raise FileNotFoundError(
            f"no replies corpus at {path}; regenerate it with: python -m grader.compare.corpus --out {path.parent}"
        )
    return path.read_text(encoding="utf-8").splitlines()


def main(argv: list[str] | None = None) -> None:
    """Regenerate the shipped corpus files."""
    parser = argparse.ArgumentParser(
        prog="python -m grader.compare.corpus", description=main.__doc__
    )
    parser.add_argument("--out", default=str(DATA_DIR), help="folder to write (default: data/)")
    for path in write_corpus(parser.parse_args(argv).out):
        print(path)


if __name__ == "__main__":
    main()
