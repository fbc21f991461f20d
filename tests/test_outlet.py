"""The outlet for student text, against generated hostile strings: nothing a student writes drives the reader's tool."""

import csv
import io
import unicodedata
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

from grader import outlet

# Any text a student could make: every code point, lone surrogates (names that were not UTF-8) included.
any_text = st.text(st.characters(codec=None, categories=None))
FORMULA_LEADS = st.sampled_from(
    ["=", "+", "-", "@", "\uff1d", "\t=", "\r=", " =", "\xa0=", "\u3000+", "\n="]
)


def unseen(char: str) -> bool:
    return char in outlet.BIDI or unicodedata.category(char) in {"Cc", "Cf", "Cs", "Zl", "Zp"}


@given(any_text)
def test_a_terminal_gets_no_control_byte_but_newline(text):
    shown = outlet.terminal(text)
    assert not [c for c in shown if c != "\n" and unseen(c)]
    assert shown.count("\n") == text.count("\n")
    shown.encode("utf-8")  # a lone surrogate would not encode


def test_a_terminal_sees_the_escape_not_the_sequence():
    title = "\x1b]0;graded: 100\x07\rok\u202eevil"
    assert outlet.terminal(title) == "\\x1b]0;graded: 100\\x07\\x0dok\\u202eevil"


@given(st.binary(max_size=12), st.binary(max_size=12))
def test_two_names_are_never_shown_alike(one, other):
    if one != other:
        assert outlet.name(one) != outlet.name(other)


@given(st.binary(max_size=40))
def test_a_name_is_one_line_of_utf8_text(raw):
    shown = outlet.name(raw)
    assert "\n" not in shown and not [c for c in shown if unseen(c)]
    shown.encode("utf-8")


def test_a_byte_and_its_escape_written_out_are_two_names():
    assert outlet.name(b"Jos\xe9") == "Jos\\xe9"
    assert outlet.name(b"Jos\\xe9") == "Jos\\\\xe9"
    # the same bytes, as os.listdir gives them
    assert outlet.name("Jos\udce9") == outlet.name(b"Jos\xe9")


@given(
    st.lists(
        st.tuples(
            st.text(st.sampled_from(" \t\xa0\u2003\u3000"), max_size=3), FORMULA_LEADS, any_text
        ),
        max_size=4,
    )
)
def test_no_line_of_a_cell_starts_a_formula(parts):
    text = "\n".join(space + lead + rest for space, lead, rest in parts)
    cell = outlet.csv_cell(text)
    for line in cell.split("\n"):
        assert line.startswith("'") or line.lstrip()[:1] not in outlet.FORMULA
    buffer = io.StringIO()
    csv.writer(buffer).writerow([cell])
    # the cell survives the CSV as written
    assert next(csv.reader(io.StringIO(buffer.getvalue()))) == [cell]


@given(any_text)
def test_html_text_is_inert(text):
    shown = outlet.html_text(text)
    assert not set("<>\"'") & set(shown)


RUNS_OR_FETCHES = {
    "img",
    "script",
    "iframe",
    "style",
    "svg",
    "object",
    "embed",
    "link",
    "form",
    "math",
    "base",
}


class Found(HTMLParser):
    """Every tag and attribute of a page."""

    def __init__(self):
        super().__init__()
        self.tags, self.attributes = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [(tag, key, value or "") for key, value in attrs]


TAG = st.sampled_from(
    [
        "a",
        "img",
        "script",
        "iframe",
        "style",
        "svg",
        "p",
        "object",
        "embed",
        "link",
        "form",
        "math",
        "base",
    ]
)
ATTRIBUTE = st.sampled_from(
    [
        "href",
        "src",
        "onerror",
        "onclick",
        "style",
        "srcset",
        "xlink:href",
        "formaction",
        "action",
        "data",
    ]
)
URL = st.sampled_from(
    [
        "javascript:alert(1)",
        " JaVaScRiPt:x",
        "java&#x09;script:x",
        "data:text/html,x",
        "//evil.example/x.png",
        "vbscript:x",
    ]
)


@given(st.lists(st.tuples(TAG, ATTRIBUTE, URL, any_text), max_size=6))
def test_markup_keeps_nothing_that_runs_or_fetches(pieces):
    fragment = "".join(
        f'<{tag} {attribute}="{url}">{text}</{tag}>\n\n' for tag, attribute, url, text in pieces
    )
    found = Found()
    found.feed(outlet.markup(fragment))
    assert not set(found.tags) & RUNS_OR_FETCHES
    for _tag, key, value in found.attributes:
        assert key in {"href", "title", "rel", "align"}  # no handler, style, source or action
        if (
            key == "href" and ":" in value.split("/")[0]
        ):  # a link with a scheme (one without is relative: no script)
            assert value.split(":", 1)[0].strip().lower() in outlet.SCHEMES


def test_markup_keeps_a_students_plain_structure():
    kept = outlet.markup('<p>See <a href="https://numpy.org">numpy</a> and <code>np.exp</code></p>')
    assert 'href="https://numpy.org"' in kept and "<code>np.exp</code>" in kept
