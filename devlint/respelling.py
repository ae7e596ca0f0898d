"""Valid Python that libcst's tokenizer refuses as written, respelled character for character.

CPython accepts some spellings libcst does not:

- indentation that mixes tabs and spaces, which CPython reads both with a tab
  as up to 8 columns and as 1 column, and accepts when the two readings give
  the same blocks (`    if x:` then `\\t    y`);
- a backslash continuation with nothing after it but the end of the file.

Replacing each tab in a line's indentation with one space gives the blocks of
the 1-column reading, which CPython has checked are the blocks of the file;
the trailing backslash becomes a space. Either way one character stands for
one character, so every offset, line and column in the respelled text is the
one in the file: the analysis parses the respelled text and reports on, and
fixes, the file as it is. Lines inside string literals keep their tabs.
"""

from __future__ import annotations

import ast
import re

from devlint.positions import line_starts

_INDENT = re.compile(r"[ \t\f]*")
_TRAILING_CONTINUATION = re.compile(r"\\(?:\r\n|\r|\n)?[ \t\f]*\Z")


def respelled(text: str, tree: ast.Module) -> str:
    """`text` spelled the way libcst reads it; `tree` is CPython's tree of `text` (it compiled)."""
    inside_strings = _lines_inside_strings(tree)
    pieces: list[str] = []
    done = 0
    for number, start in enumerate(line_starts(text), start=1):
        if number in inside_strings:
            continue
        indent = _INDENT.match(text, start)
        assert indent is not None  # the pattern matches the empty string
        if "\t" in indent.group():
            pieces += [text[done:start], indent.group().replace("\t", " ")]
            done = indent.end()
    pieces.append(text[done:])
    spelled = "".join(pieces)
    trailing = _TRAILING_CONTINUATION.search(spelled)
    if trailing is not None:
        spelled = spelled[: trailing.start()] + " " + spelled[trailing.start() + 1 :]
    return spelled


def _lines_inside_strings(tree: ast.Module) -> set[int]:
    """Lines that begin inside a string literal (the lines after the first of a multi-line one)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno is not None and node.end_lineno > node.lineno:
            if isinstance(node, ast.JoinedStr) or isinstance(node.value, (str, bytes)):
                lines.update(range(node.lineno + 1, node.end_lineno + 1))
    return lines
