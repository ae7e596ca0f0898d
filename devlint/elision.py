"""Large literal data tables, blanked out before libcst parses the file.

A module-level table of numbers and strings (tuned kernel configurations,
vocabularies, lookup tables) holds no device fact, yet libcst builds a node for
every element and its whitespace: torch's `sparse/_triton_ops_meta.py` spends
nine tenths of its parse on one 466 kB dict. CPython's parser has already
produced the file's `ast`, so such a literal is found there and its inside is
replaced, character for character, by `...` and blanks with the same line
breaks. Every offset, line and column in the file stays what it was, so
findings, fixes and their positions are unaffected; the analysis sees a
container of `...` where the table was.

Only pure literals are blanked (constants, dotted names, nested containers,
signs), only
when they are large, and never when a string or name in them mentions an
accelerator (`"cuda:0"`, `ngpu`, `torch.cuda.x`): DL102 may have something
to say about those, and they make a file one that may use an accelerator.
"""

from __future__ import annotations

import ast
import re

from devlint.analysis.accelerator_use import names_accelerator, string_names_accelerator
from devlint.positions import line_starts

# Smaller tables cost little to parse; the threshold keeps elision to real data.
MIN_ELIDED_CHARS = 10_000

_CONTAINERS = (ast.Dict, ast.List, ast.Tuple, ast.Set)
# Dotted names are allowed: tables key on `torch.float16` and the like. At
# worst a name held a tensor, and an unknown element only ever silences.
_PURE = (*_CONTAINERS, ast.Constant, ast.UnaryOp, ast.USub, ast.UAdd, ast.Load, ast.Name, ast.Attribute)
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_NOT_NEWLINE = re.compile(r"[^\r\n]")


def elide_data_tables(text: str, tree: ast.Module) -> str:
    """`text` with the inside of every large pure literal assigned at module level blanked out."""
    if len(text) < MIN_ELIDED_CHARS:
        return text
    spans = [(start, end) for start, end, value in _candidate_spans(text, tree) if _is_elidable(text, start, end, value)]
    if not spans:
        return text
    pieces = []
    done = 0
    for start, end in spans:
        blank = _NOT_NEWLINE.sub(" ", text[start + 1 : end - 1])
        at = blank.find("   ")
        if at >= 0:  # `{...}`: shown as elided wherever a message quotes it
            blank = blank[:at] + "..." + blank[at + 3 :]
        pieces += [text[done : start + 1], blank]
        done = end - 1
    pieces.append(text[done:])
    return "".join(pieces)


def _candidate_spans(text: str, tree: ast.Module) -> list[tuple[int, int, ast.expr]]:
    """Character spans of the large container literals assigned by module-level statements."""
    values = [
        statement.value
        for statement in _module_level(tree.body)
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and isinstance(statement.value, _CONTAINERS)
    ]
    if not values:
        return []
    starts = line_starts(text)
    spans = []
    for value in values:
        assert value.end_lineno is not None and value.end_col_offset is not None
        start = _offset(text, starts, value.lineno, value.col_offset)
        end = _offset(text, starts, value.end_lineno, value.end_col_offset)
        if end - start >= MIN_ELIDED_CHARS:
            spans.append((start, end, value))
    return spans


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements run at import time, through `if`/`try` blocks but not into functions or classes."""
    found: list[ast.stmt] = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, ast.If):
            found.extend(_module_level(statement.body))
            found.extend(_module_level(statement.orelse))
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody):
                found.extend(_module_level(block))
            for handler in statement.handlers:
                found.extend(_module_level(handler.body))
    return found


def _is_elidable(text: str, start: int, end: int, value: ast.expr) -> bool:
    if _OPENERS.get(text[start]) != text[end - 1]:
        return False  # a tuple without parentheses has no brackets to keep
    # Words that make a file one that may use an accelerator (DL501 and DL102 ask)
    # keep the table: blanking them would change that answer.
    for node in ast.walk(value):
        if not isinstance(node, _PURE):
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and string_names_accelerator(node.value):
            return False
        if isinstance(node, ast.Name) and names_accelerator(node.id):
            return False
        if isinstance(node, ast.Attribute) and (node.attr == "device" or names_accelerator(node.attr)):
            return False
    return True


def _offset(text: str, starts: list[int], line: int, utf8_column: int) -> int:
    """ast columns count UTF-8 bytes; this turns one into a character offset."""
    start = starts[line - 1]
    line_end = starts[line] if line < len(starts) else len(text)
    prefix = text[start:line_end].encode("utf-8")[:utf8_column]
    return start + len(prefix.decode("utf-8", errors="ignore"))
