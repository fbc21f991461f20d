"""Hypothesis strategies for hostile uploads, and the means to lay them on disk: trees of folders, files, links and zips
with names in any bytes, zips nested and zip bombs, links to a classmate or outside, notebooks of any shape, markdown.

A tree is a dict: name (bytes) -> bytes (a file), a dict (a folder), Link(target) or Zip(tree). Every module a
student's tree holds starts with that student's MARK line, so a test can tell whose bytes a submission holds.
"""

import functools
import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from grader.sandbox.intake import MODULE_FILES

SECRET = b"# SECRET: the reference, outside every upload\n"


@dataclass(frozen=True)
class Link:
    """A symbolic link: to a classmate's folder, a file of theirs, the secret folder outside, itself, or nowhere."""

    target: bytes


@dataclass(frozen=True)
class Zip:
    """A zip archive holding a tree (its links kept as zip keeps them), and a bomb: `zeros` bytes of zeros packed small, as a
    member named `bomb` (a module's name is read; a zip's name is read whole to be unpacked; another name is never read)."""

    tree: dict
    zeros: int = 0
    bomb: bytes = b"softmax.py"


def mark(student: bytes) -> bytes:
    return b"# MARK " + student.hex().encode() + b"\n"


# Any name a POSIX file system holds: bytes but / and NUL, not . or ..; module names and classmates' look-alikes often.
any_name = st.binary(min_size=1, max_size=10).filter(
    lambda name: b"/" not in name and b"\0" not in name and name not in (b".", b"..")
)
names = st.one_of(
    any_name,
    st.sampled_from(
        [n.encode() for n in MODULE_FILES] + [b"exercises", b"work.zip", b"__MACOSX", b"x.zip"]
    ),
)
link_targets = st.sampled_from(
    [
        b"../bob",
        b"../bob/exercises",
        b"../bob/exercises/softmax.py",
        b"../../secret",
        b"../../secret/softmax.py",
        b".",
        b"nowhere",
    ]
)


def trees(student: bytes, depth: int = 3):
    """A student's folder: modules with their mark, other files, folders, links and zips, `depth` deep at most."""
    module = st.sampled_from(MODULE_FILES).map(str.encode)
    leaf = st.one_of(
        st.binary(max_size=40).map(lambda body: mark(student) + body),
        st.builds(Link, link_targets),
    )

    def extend(children):
        folder = st.dictionaries(st.one_of(names, module), children, max_size=4)
        return st.one_of(
            folder,
            st.builds(Zip, folder),
            st.builds(
                Zip,
                st.just({}),
                st.integers(1 << 16, 1 << 20),
                st.sampled_from([b"softmax.py", b"deep.zip", b"zeros.py"]),
            ),
        )

    return st.recursive(leaf, extend, max_leaves=12).map(
        lambda node: node if isinstance(node, dict) else {b"exercises": node}
    )


def honest(student: bytes) -> dict:
    """The five modules in exercises/, each with the student's mark."""
    return {
        b"exercises": {
            name.encode(): mark(student) + b"def f():\n    pass\n" for name in MODULE_FILES
        }
    }


def lay(folder: Path, tree: dict) -> None:
    """Write a tree into folder (made here)."""
    os.makedirs(folder, exist_ok=True)
    for name, node in tree.items():
        path = os.path.join(os.fsencode(folder), name)
        if os.path.lexists(path):
            continue
        if isinstance(node, bytes):
            with open(path, "wb") as out:
                out.write(node)
        elif isinstance(node, dict):
            lay(Path(os.fsdecode(path)), node)
        elif isinstance(node, Link):
            os.symlink(node.target, path)
        else:
            with open(path, "wb") as out:
                out.write(packed(node))


def packed(archive: Zip) -> bytes:
    """A Zip's bytes: its tree (links as zip keeps them, names as bytes), or its bomb."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        if archive.zeros:
            out.writestr(archive.bomb.decode("cp437"), bytes(archive.zeros))
        for name, node in _members(archive.tree, b""):
            # the bytes as they are: zip's names are CP437 unless flagged
            info = zipfile.ZipInfo(name.decode("cp437"))
            if isinstance(node, Link):
                info.external_attr = 0o120777 << 16
                out.writestr(info, node.target)
            else:
                out.writestr(info, node if isinstance(node, bytes) else packed(node))
    return buffer.getvalue()


def _members(tree: dict, prefix: bytes):
    for name, node in tree.items():
        if isinstance(node, dict):
            yield from _members(node, prefix + name + b"/")
        else:
            yield prefix + name, node


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@functools.cache
def kit_notebook() -> str:
    from grader.course.nbgrader import notebook

    return notebook.dumps("week-4")


@st.composite
def notebooks(draw) -> str:
    """A submitted notebook's text of any shape: the kit's own, with cells added or changed, or any JSON at all."""
    nb = json.loads(kit_notebook())
    cell = st.fixed_dictionaries(
        {
            "cell_type": st.sampled_from(["markdown", "code", "raw", "other"]),
            "source": st.text(max_size=30) | json_values,
        },
        optional={"metadata": json_values, "outputs": json_values, "id": st.text(max_size=8)},
    )
    nb["cells"] += draw(st.lists(cell, max_size=6))
    shape = draw(st.sampled_from(["kit", "any", "many"]))
    if shape == "any":
        return json.dumps(draw(json_values))
    if shape == "many":
        # past SMALL.cells; past BOUNDS.cells in the tests of the bound itself
        nb["cells"] *= draw(st.integers(1, 8))
    return json.dumps(nb)


HOSTILE_URLS = [
    "javascript:alert(1)",
    " JaVaScRiPt:alert(1)",
    "java&#x09;script:alert(1)",
    "jav\tascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:x",
    "//elsewhere.example/x.png",
    "https://elsewhere.example/x.png",
]
_fragments = st.one_of(
    st.sampled_from(
        [
            "\n",
            "\n\n",
            "- ",
            "  ",
            "1. ",
            "> ",
            "```\n",
            "    ",
            "# ",
            "|a|b|\n|-|-|\n",
            "$",
            "$$",
            "\\",
            "<!--",
            "-->",
        ]
    ),
    st.builds("[t]({})".format, st.sampled_from(HOSTILE_URLS)),
    st.builds("![i]({})".format, st.sampled_from(HOSTILE_URLS)),
    st.builds("<{}>".format, st.sampled_from(HOSTILE_URLS)),
    st.builds("[r]: {}\n[x][r]".format, st.sampled_from(HOSTILE_URLS)),
    st.builds(
        '<{0} {1}="{2}">x</{0}>'.format,
        st.sampled_from(
            [
                "a",
                "img",
                "script",
                "iframe",
                "svg",
                "math",
                "style",
                "object",
                "p",
                "div",
                "form",
                "base",
                "link",
            ]
        ),
        st.sampled_from(
            ["href", "src", "onerror", "onclick", "style", "srcset", "xlink:href", "action", "data"]
        ),
        st.sampled_from(HOSTILE_URLS),
    ),
    st.text(max_size=8),
)
markdown = st.lists(_fragments, max_size=12).map("".join)
