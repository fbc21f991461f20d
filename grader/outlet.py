"""The one outlet for student text: every string a student made leaves the grader through here, per medium.

A student chooses folder names, what their code prints and raises, and a notebook's markdown. Shown
raw, any of it could drive the reader's tool: terminal escapes redraw an instructor's screen, a cell
a spreadsheet takes for a formula runs, a link or an image in a page runs script or calls another
host. Each medium gets its own rule here, and nothing downstream renders the result again.
"""

import html
import unicodedata

import nh3

# Characters that reorder the text shown after them (Unicode's bidirectional controls).
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# controls, format characters, lone surrogates, line breaks
UNSEEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# what makes a spreadsheet read a cell as a formula (OWASP), full-width too
FORMULA = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
# The HTML a student's markdown may become: text structure and links, nothing that runs or fetches.
TAGS = frozenset(
    "a abbr b blockquote br code dd del dl dt em h1 h2 h3 h4 h5 h6 hr i kbd li ol p pre q s samp "
    "strong sub sup table tbody td tfoot th thead tr ul".split()
)
ATTRIBUTES = {"a": {"href", "title"}, "td": {"align"}, "th": {"align"}}
SCHEMES = frozenset({"http", "https", "mailto"})


def _escape(char: str) -> str:
    """One unseen character as an escape a reader can type: \\x1b, \\u202e, or \\xNN for a byte that was not UTF-8."""
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return (
        f"\\x{code:02x}"
        if code < 0x80
        else f"\\u{code:04x}"
        if code <= 0xFFFF
        else f"\\U{code:08x}"
    )


def _unseen(char: str) -> bool:
    return char in BIDI or unicodedata.category(char) in UNSEEN


def terminal(text: str, keep: str = "\n") -> str:
    """Text for a terminal or a log: every control, format and bidi character but those in keep written as an escape.

    keep: "\n\t" for what a student's code printed, whose tabs line up its own columns.
    """
    return "".join(_escape(c) if c not in keep and _unseen(c) else c for c in text)


def name(raw: "str | bytes") -> str:
    """A file or folder name as one line of text, one to one: two different names are never shown alike.

    Bytes that are not UTF-8 (or kept by surrogateescape) are written \\xNN, a backslash as \\\\, so the
    folder named `Jos` + byte 0xE9 and the one named with the four characters `Jos\\xe9` stay apart; a leading
    apostrophe as \\x27, so that csv_cell's apostrophe never makes two names one cell.
    """
    text = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else str(raw)
    shown = "".join("\\\\" if c == "\\" else _escape(c) if _unseen(c) else c for c in text)
    return "\\x27" + shown[1:] if shown.startswith("'") else shown


def csv_cell(text: str) -> str:
    """A spreadsheet cell that nothing runs: escapes as for a terminal, and every line that would start
    a formula once its leading whitespace is skipped gets an apostrophe first."""
    lines = terminal(text).split("\n")
    return "\n".join("'" + line if line.lstrip()[:1] in FORMULA else line for line in lines)


def html_text(text: str) -> str:
    """Text for an HTML page: escaped as for a terminal, then every markup character as an entity."""
    return html.escape(terminal(text), quote=True)


def markup(fragment: str) -> str:
    """HTML a student's markdown became, cleaned once to a fixed allow-list: no script, handler, style,
    image or frame, links only to http, https and mailto. Store it where nothing renders it again."""
    return nh3.clean(
        terminal(
            fragment
        ),  # no lone surrogate (not UTF-8) reaches the cleaner, no control character the page
        tags=set(TAGS),
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        url_schemes=set(SCHEMES),
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
