"""The replies corpus has the properties the lesson relies on."""

import random
import re
from collections import Counter, defaultdict
from itertools import accumulate

import pytest

from grader.compare import corpus
from grader.compare.corpus import check_reply

WINDOW = 8
PAD = "\n" * WINDOW  # the context before a reply's first character
ORDER_SPOT = "r #00000"  # the order blind spot, digits made canonical
CUE_SPOT = corpus.DECISION_CUE[-WINDOW:]


@pytest.fixture(scope="module")
def train():
    return corpus.load_replies("train")


def canonical(reply):
    """The reply with its order number as 00000: the digits are a free choice."""
    return re.sub(r"#[0-9]{5}", "#00000", reply)


def padded(replies):
    """Each reply as an 8-character model reads it: start context, reply, end of line."""
    return [PAD + canonical(reply) + "\n" for reply in replies]


def ngram_counts(replies):
    """For every 8-character context, how often each next character follows it."""
    counts = defaultdict(Counter)
    for text in padded(replies):
        for i in range(WINDOW, len(text)):
            counts[text[i - WINDOW : i]][text[i]] += 1
    return counts


def test_regenerating_gives_the_shipped_files(tmp_path):
    corpus.write_corpus(tmp_path)
    for split in corpus.SPLITS:
        shipped = (corpus.DATA_DIR / f"{split}.txt").read_bytes()
        assert (tmp_path / f"{split}.txt").read_bytes() == shipped


def test_splits_have_their_sizes():
    assert len(corpus.load_replies("train")) == 4000
    assert len(corpus.load_replies("valid")) == 500


def test_missing_corpus_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m grader.compare.corpus"):
        corpus.load_replies("train", tmp_path)
    with pytest.raises(ValueError):
        corpus.load_replies("test")


def test_generation_is_deterministic_per_seed():
    assert corpus.generate(50, 7) == corpus.generate(50, 7)
    assert corpus.generate(50, 7) != corpus.generate(50, 8)


def test_conditions_are_balanced(train):
    conditions = Counter(check_reply(reply).condition for reply in train)
    assert abs(conditions["past"] / len(train) - 0.5) < 0.03


def test_every_shipped_reply_is_correct_and_of_lesson_length(train):
    for reply in train + corpus.load_replies("valid"):
        assert 60 <= len(reply) <= 140, reply
        assert check_reply(reply).correct, reply


def test_every_reply_the_grammar_can_make_is_60_to_140_characters():
    for pick, acks in ((max, corpus.ACKS), (min, [""])):
        for condition, verdict in corpus.VERDICTS.items():
            reply = corpus.TEMPLATE.format(
                greeting=pick(corpus.GREETINGS, key=len),
                name=pick(corpus.NAMES, key=len),
                ack=pick(acks, key=len).format(item=max(corpus.ITEMS, key=len), number="12345"),
                subject=pick(corpus.SUBJECTS, key=len),
                condition=condition,
                days=pick(corpus.DAYS),
                decision=corpus.DECISIONS[verdict],
                closing=pick(corpus.CLOSINGS, key=len),
            )
            assert check_reply(reply).correct
            assert 60 <= len(reply) <= 140, reply


def test_alphabet_covers_every_character(train):
    assert set("".join(train)) == set(corpus.ALPHABET)
    assert list(corpus.ALPHABET) == sorted(corpus.ALPHABET)
    assert 35 <= len(corpus.ALPHABET) <= 45


def test_the_decision_is_invisible_to_eight_characters(train):
    for reply in train:
        at = corpus.decision_positions(reply)
        assert reply[at - WINDOW : at] == CUE_SPOT
        condition = check_reply(reply).condition
        assert reply[at] == corpus.CONDITIONS[condition]
    assert len(set(corpus.CONDITIONS.values())) == 2


def test_the_condition_is_25_to_30_characters_before_the_decision(train):
    for reply in train:
        start = corpus.REPLY_RE.fullmatch(reply).start("condition")
        assert 25 <= corpus.decision_positions(reply) - start <= 30


def test_the_order_acknowledgements_share_eight_characters_then_part(train):
    nexts = defaultdict(set)
    for reply in train:
        match = re.search(r"(thanks for your|sorry about) order #[0-9]{5}", reply)
        if match:
            end = match.end()
            assert re.fullmatch("r #[0-9]{5}", reply[end - WINDOW : end])
            nexts[match[1]].add(reply[end])
    assert nexts == {"thanks for your": {"."}, "sorry about": {" "}}
    share = sum("order #" in reply for reply in train) / len(train)
    assert 0.35 <= share <= 0.45


@pytest.mark.slow
def test_every_other_choice_is_free_or_seen_in_eight_characters(train):
    """Splice each reply, wherever its context allows another next character, onto a reply
    that took that character: only the two blind spots may spoil the result."""
    texts = padded(train)
    takers = defaultdict(dict)  # context -> next character -> (reply, position)
    for r, text in enumerate(texts):
        for i in range(WINDOW, len(text)):
            takers[text[i - WINDOW : i]].setdefault(text[i], (r, i))
    spoilt = Counter()
    for text in texts[:1000]:
        for i in range(WINDOW, len(text)):
            context = text[i - WINDOW : i]
            for char, (r, j) in takers[context].items():
                if char != text[i]:
                    spliced = (text[:i] + texts[r][j:])[WINDOW:-1]
                    verdict = check_reply(spliced)
                    if not verdict.correct:
                        spoilt[context, verdict.well_formed] += 1
    assert set(spoilt) == {(CUE_SPOT, True), (ORDER_SPOT, False)}


@pytest.mark.slow
def test_a_perfect_eight_character_model_writes_about_40_percent_correct(train):
    model = {
        context: (list(nexts), list(accumulate(nexts.values())))
        for context, nexts in ngram_counts(train).items()
    }
    rng = random.Random(0)
    correct = 0
    for _ in range(2000):
        text, char = PAD, ""
        while char != "\n" and len(text) < 200:
            chars, cum_weights = model[text[-WINDOW:]]
            char = rng.choices(chars, cum_weights=cum_weights)[0]
            text += char
        correct += check_reply(text[WINDOW:].rstrip("\n")).correct
    assert 0.30 <= correct / 2000 <= 0.50


def test_a_contradicting_decision_is_well_formed_but_not_correct(train):
    reply = next(r for r in train if "past the" in r)
    flipped = reply.replace(corpus.DECISIONS["refuse"], corpus.DECISIONS["accept"])
    verdict = check_reply(flipped)
    assert verdict.well_formed and not verdict.correct
    assert (verdict.condition, verdict.decision) == ("past", "accept")


@pytest.mark.parametrize(
    "spoil",
    [
        lambda r: r[:-1],
        lambda r: r[:40],
        lambda r: r.replace("window", "windw"),
        lambda r: r + ".",
        lambda r: r.replace(",", ",,", 1),
        lambda r: r.upper(),
        lambda r: "",
    ],
)
def test_a_malformed_reply_is_not_well_formed(train, spoil):
    verdict = check_reply(spoil(train[0]))
    assert not verdict.well_formed and not verdict.correct
    assert verdict.condition is None and verdict.decision is None
