"""Reading a file's bytes into text the way Python itself would decode them."""

from __future__ import annotations

import ast
import codecs
import io
import re
import sys
import tokenize
import warnings
from dataclasses import dataclass

# A file past this size is reported (DL000), not read further. Data tables of
# literals do not count against the token limit below (they are elided before
# libcst parses), but CPython's syntax tree, which finds them, takes about
# 0.35 GB per million characters of them.
MAX_ANALYSED_CHARS = 2_000_000
# libcst's parser needs 2 to 3.5 kB of memory per token (a name, an operator, a
# newline), whatever the layout: 3.4 GB for 2 MB of `torch.zeros(1), ` on one
# line. Text past this many tokens (after data tables are elided) is reported
# (DL000) instead of parsed: at most about 0.9 GB, and 8 s.
MAX_PARSED_TOKENS = 250_000

# The recursion limit CPython compiles with by default. Code nested deeper than
# CPython accepts at this limit cannot run anyway, and libcst's native parser
# slows down quadratically on it and overflows its stack a few thousand levels
# down (a crash no exception handler can catch).
_PYTHON_RECURSION_LIMIT = 1000
_TOO_DEEP_MESSAGES = ("too many nested parentheses", "too many statically nested blocks", "too many levels of indentation")
_WORD_OR_SYMBOL = re.compile(r"\w+|[^\w\s]")
_LIBCST_PREFIX = re.compile(r"^(?:parser|tokenizer) error:\s*(?:error at \d+:\d+:\s*)?")


class UnreadableSource(Exception):
    """Why a file cannot be analysed; the message is shown to the user as DL000."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str
    bom: bool

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def decode(data: bytes) -> SourceText:
    """PEP 263 coding line and BOM honoured; binary and undecodable files refused."""
    if b"\x00" in data:
        raise UnreadableSource("binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise UnreadableSource(f"bad encoding declaration: {error}") from None
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8):] if bom else data
    python_name = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        text = body.decode(python_name)
    except UnicodeDecodeError as error:
        line = body[: error.start].count(b"\n") + 1
        raise UnreadableSource(
            f"cannot decode as {python_name} at byte {error.start} (add a PEP 263 coding line if the file is not UTF-8)",
            line=line,
        ) from None
    return SourceText(text=text, encoding=python_name, bom=bom)


def too_large(text: str) -> UnreadableSource | None:
    if len(text) <= MAX_ANALYSED_CHARS:
        return None
    return UnreadableSource(
        f"file too large to analyse ({len(text) / 1_000_000:.1f} million characters; "
        f"devlint parses files up to {MAX_ANALYSED_CHARS // 1_000_000} million)"
    )


@dataclass(frozen=True)
class TokenCount:
    total: int
    in_literals: int  # numbers, strings and the punctuation between them: what data-table elision may blank


# What a literal data table (`TABLE = [[1, 2.5], ...]`) is made of, besides numbers and strings.
_LITERAL_PUNCTUATION = frozenset(",()[]{}:-+")
_LITERAL_TYPES = frozenset({tokenize.NUMBER, tokenize.STRING, tokenize.NL})


def count_tokens(text: str) -> TokenCount | None:
    """The tokens of `text`, or None for text that cannot have more than libcst may parse.

    CPython's tokenizer streams: counting takes no memory to speak of, unlike
    CPython's syntax tree of the same text. It is also slow (0.8 s a megabyte
    on Python 3.11), so a cheap upper bound rules out most files first.
    """
    if 2 * len(text) + 1 <= MAX_PARSED_TOKENS:
        return None  # a token takes a character at least, and each dedent an indent before it
    if _most_tokens(text) <= MAX_PARSED_TOKENS:
        return None
    total = in_literals = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            total += 1
            if token.type in _LITERAL_TYPES or (token.type == tokenize.OP and token.string in _LITERAL_PUNCTUATION):
                in_literals += 1
    except (tokenize.TokenError, SyntaxError):
        # What CPython compiles, its pure-Python tokenizer may still refuse (a backslash at the end).
        total = max(total, len(_WORD_OR_SYMBOL.findall(text)))
    return TokenCount(total, in_literals)


def _most_tokens(text: str) -> int:
    """At least as many as CPython's tokenizer makes of `text`.

    Every name, number, string, operator and comment holds a word or a symbol of
    its own; a line adds at most a newline, an indent and (later) the dedent
    that closes it; the end adds two.
    """
    lines = text.count("\n") + text.count("\r")
    return len(_WORD_OR_SYMBOL.findall(text)) + 3 * lines + 3


def too_many_tokens(count: int) -> UnreadableSource | None:
    if count <= MAX_PARSED_TOKENS:
        return None
    return UnreadableSource(
        f"file too large to analyse ({count:,} tokens; devlint parses files of up to {MAX_PARSED_TOKENS:,}, "
        "as its parser needs about 3 kB of memory per token)"
    )


@dataclass(frozen=True)
class PythonVerdict:
    """What CPython's own parser says about a text, before libcst sees it."""

    too_deep: UnreadableSource | None = None  # do not hand this text to libcst
    syntax_error: UnreadableSource | None = None  # CPython's message, if libcst agrees it is broken
    tree: ast.Module | None = None  # CPython's syntax tree, when it parsed


def python_verdict(text: str) -> PythonVerdict:
    """Compile with CPython (fast, in C) at the default recursion limit."""
    previous = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(_PYTHON_RECURSION_LIMIT)
    except RecursionError:  # already deeper than that: keep the limit we have
        previous = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like are not ours to report
            tree = compile(text, "<devlint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (RecursionError, MemoryError) as error:
        detail = str(error) or "parser stack overflow"
        return PythonVerdict(too_deep=UnreadableSource(f"too deeply nested to analyse ({detail})"))
    except SyntaxError as error:
        message = error.msg or "invalid syntax"
        line = error.lineno or 1
        column = error.offset or 1
        if message in _TOO_DEEP_MESSAGES:
            return PythonVerdict(too_deep=UnreadableSource(f"too deeply nested to analyse ({message})", line, column))
        return PythonVerdict(syntax_error=UnreadableSource(f"syntax error: {message}", line, column))
    except ValueError as error:  # e.g. NUL bytes, refused earlier anyway
        return PythonVerdict(too_deep=UnreadableSource(f"cannot compile: {error}"))
    finally:
        if previous is not None:
            sys.setrecursionlimit(previous)
    return PythonVerdict(tree=tree)


def libcst_syntax_message(message: str) -> str:
    """libcst's `parser error: error at 3:0: expected ...` without its (imprecise) position."""
    return _LIBCST_PREFIX.sub("", message.strip().splitlines()[0] if message.strip() else "invalid syntax")
