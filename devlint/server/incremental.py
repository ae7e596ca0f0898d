"""Parsing a file again after an edit: only the top-level statements around it.

libcst parses about ten thousand lines a second, so parsing a 1,000-line
script on every keystroke would spend the editor's whole latency budget
before the analysis starts. A top-level statement parses the same alone as in
its file, so after an edit only the statements it touches are parsed again,
with one unchanged neighbour on each side: the blank lines and comments
between two statements belong to one or the other depending on both. Every
other statement is the previous tree's node, shared as is (libcst nodes are
immutable).

The result must be the tree a whole parse gives, or the analysis could see
something else than the CLI. Where a piece could differ, the whole file is
parsed instead: an edit that reaches the block that sets the file's default
indentation, the header, a file without a final newline, a piece that does
not parse alone, or one whose last statement does not end where the
unchanged one did. The tests compare against whole parses after many edits.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

import libcst as cst

from devlint.parsing import parse_module
from devlint.server.text_diff import changed_span

# Below this many statements a whole parse is as cheap as the bookkeeping.
_MIN_STATEMENTS = 4
_BLOCK_HOLDERS = (cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


class IncrementalParser:
    """One document's latest text and tree; `parse(text)` reuses what the edit left alone."""

    def __init__(self, parse: Callable[[str], cst.Module] = parse_module) -> None:
        self._parse = parse
        self._text: str | None = None
        self._module: cst.Module | None = None
        # starts[k]: offset of top-level statement k (its leading lines included);
        # starts[-1]: where the footer starts. Computed on first need: it takes a codegen pass.
        self._starts: list[int] | None = None
        self._first_block: int | None = None  # index of the first statement holding an indented block; -1: none
        self.reparsed: int | None = None  # statements parsed again by the last call (None: the whole file)

    @property
    def module(self) -> cst.Module | None:
        """The tree of the latest text parsed."""
        return self._module

    def parse(self, text: str) -> cst.Module:
        """The tree of `text`; raises libcst.ParserSyntaxError as a whole parse does."""
        if self._module is not None and text == self._text:
            self.reparsed = 0
            return self._module
        spliced = self._splice(text) if self._module is not None else None
        if spliced is None:
            module = self._parse(text)
            self._starts = None
            self._first_block = None
            self.reparsed = None
        else:
            module, self._starts, self.reparsed = spliced
            self._first_block = None
        self._text, self._module = text, module
        return module

    def _splice(self, new: str) -> tuple[cst.Module, list[int], int] | None:
        old, module = self._text, self._module
        assert old is not None and module is not None
        body = module.body
        if len(body) < _MIN_STATEMENTS or not old.endswith(("\n", "\r")) or not new.endswith(("\n", "\r")):
            return None
        starts = self._statement_starts()
        if starts is None:
            return None
        prefix, old_end, _ = changed_span(old, new)
        delta = len(new) - len(old)
        # -1: the edit starts in the header (comments and the coding line before the first statement).
        first = bisect.bisect_right(starts, prefix) - 1
        last = bisect.bisect_right(starts, max(old_end - 1, prefix)) - 1
        # One unchanged neighbour before the edit where it reaches a statement's leading lines (the
        # comments and blank lines there belong to one statement or the other, depending on both),
        # and one after it unless the next statement's leading lines are blank: a comment there may
        # belong to the edited statement's last block. Parsing a big neighbour costs more than the edit.
        inside = 0 < first < len(body) and prefix > starts[first] + len(_lines_code(module, body[first].leading_lines))
        begin = first if inside else first - 1
        end = last + 1
        if end < len(body) and all(line.comment is None for line in body[end].leading_lines):
            end = last  # the piece ends where the next statement's blank lines start
        with_tail = end > last
        at_start = begin < 0  # the piece starts the file: its header is the file's
        if at_start:
            begin = 0
        to_eof = end >= len(body)
        chunk_start = 0 if at_start else starts[begin]
        chunk_end = len(new) if to_eof else starts[end + 1] + delta
        try:
            piece = self._parse(new[chunk_start:chunk_end])
        except cst.ParserSyntaxError:
            return None
        if len(piece.body) < (2 if with_tail else 1) or not piece.has_trailing_newline or piece.default_newline != module.default_newline:
            return None
        if not with_tail and not to_eof and piece.footer:
            return None  # lines the file gives the last block went to the piece's end
        # libcst keeps a block's indentation only where it differs from the file's default,
        # which the first indented block sets: the piece must agree with the file on it.
        first_block = self._first_block_index()
        default_indent = module.default_indent
        if any(_opens_block(statement) for statement in piece.body):
            if first_block >= 0 and piece.default_indent != module.default_indent:
                return None
            default_indent = piece.default_indent
        elif begin <= first_block <= end:
            return None  # the first block is gone: the next one, after the piece, may set another default
        codes = [piece.code_for_node(statement) for statement in piece.body]
        header_code = _lines_code(piece, piece.header)
        footer_code = _lines_code(piece, piece.footer)
        if "".join((header_code, *codes, footer_code)) != new[chunk_start:chunk_end]:
            return None  # libcst does not give this text back (it drops a line holding only a backslash)
        lengths = [len(code) for code in codes]
        header, footer = len(header_code), len(footer_code)
        head = piece.body[0]
        new_header = module.header
        if at_start:
            new_header = piece.header
        elif piece.header:
            # Alone, the piece's leading comments are its module header; in the file they lead its first statement.
            head = head.with_changes(leading_lines=(*piece.header, *head.leading_lines))
        if not at_start:
            lengths[0] += header
        middle = list(piece.body[1:-1])
        tail = piece.body[-1]
        if to_eof:
            new_footer, trailing_newline = piece.footer, piece.has_trailing_newline
        elif not with_tail:
            new_footer, trailing_newline = module.footer, module.has_trailing_newline
        else:
            # Alone, the piece ends at end of file, where trailing comments may go to the
            # module's footer; in the file they belong to the unchanged statement's block.
            kept = body[end]
            # Both end where the piece ends and each was checked against the text: equal lengths, equal text.
            tail_code = lengths[-1] - len(_lines_code(piece, tail.leading_lines)) + footer
            kept_code = starts[end + 1] - starts[end] - len(_lines_code(module, kept.leading_lines))
            if tail_code != kept_code:
                return None
            tail = kept.with_changes(leading_lines=tail.leading_lines)
            lengths[-1] += footer
            new_footer, trailing_newline = module.footer, module.has_trailing_newline
        edited = [head, *middle, tail] if len(piece.body) > 1 else [head]
        statements = [*body[:begin], *edited, *body[end + 1 :]]
        spliced = module.with_changes(
            header=new_header,
            body=statements,
            footer=new_footer,
            has_trailing_newline=trailing_newline,
            default_indent=default_indent,
        )
        new_starts = starts[:begin]
        offset = chunk_start + (header if at_start else 0)
        for length in lengths:
            new_starts.append(offset)
            offset += length
        if to_eof:
            new_starts.append(offset)
        else:
            new_starts.extend(start + delta for start in starts[end + 1 :])
        return spliced, new_starts, len(piece.body)

    def _statement_starts(self) -> list[int] | None:
        """Where each top-level statement starts; None when libcst does not give the text back."""
        if self._starts is None:
            module, text = self._module, self._text
            assert module is not None and text is not None
            offset = len(_lines_code(module, module.header))
            if text[:offset] != _lines_code(module, module.header):
                return None
            starts = []
            for statement in module.body:
                code = module.code_for_node(statement)
                if text[offset : offset + len(code)] != code:
                    return None
                starts.append(offset)
                offset += len(code)
            if text[offset:] != _lines_code(module, module.footer):
                return None
            starts.append(offset)
            self._starts = starts
        return self._starts

    def _first_block_index(self) -> int:
        if self._first_block is None:
            assert self._module is not None
            self._first_block = next((k for k, s in enumerate(self._module.body) if _opens_block(s)), -1)
        return self._first_block


def _opens_block(statement: cst.CSTNode) -> bool:
    """Whether a top-level statement holds an indented block (where the tokenizer emits INDENT)."""
    stack = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.IndentedBlock):
            return True
        if isinstance(node, _BLOCK_HOLDERS):
            stack.extend(node.children)
    return False


def _lines_code(module: cst.Module, lines: Sequence[cst.EmptyLine]) -> str:
    return "".join(module.code_for_node(line) for line in lines)

