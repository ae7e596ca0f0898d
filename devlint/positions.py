"""Where nodes lie in the text, at a fraction of libcst's PositionProvider cost.

PositionProvider builds a CodePosition per node from a regex split of every
token, and MetadataWrapper adds a full visit of its own: on a 500 kB file the
two took 2.5 times as long as the parse. The code generation underneath is
cheap, so this tracks one character offset, keeps plain (start, end) offsets
per node, and turns offsets into lines and columns only for the nodes asked
about. The ranges are PositionProvider's: syntactic where a node records one,
whitespace-inclusive otherwise.

Only the top-level statements that hold a node asked about are generated:
CPython's syntax tree (built anyway for the syntax pre-check) says on which
line each one starts. A statement whose generated text does not sit exactly
there in the file falls back to generating the whole module.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from devlint.statement_facts import StatementFacts

_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst (and CPython) count as a line break


def line_starts(text: str) -> list[int]:
    """The offset at which each line of `text` starts."""
    return [0] + [match.end() for match in _NEWLINE.finditer(text)]


@dataclass
class _OffsetState(CodegenState):
    spans: dict[cst.CSTNode, tuple[int, int]] = field(default_factory=dict)
    offset: int = 0
    _starts: list[int] = field(default_factory=list)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.spans:  # a syntactic range recorded inside wins
            self.spans[node] = (start, self.offset)

    @contextmanager
    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> Iterator[None]:
        start = self.offset
        try:
            yield
        finally:
            end = self.offset
            if start_node is not None:
                start = self.spans[start_node][0]
            if end_node is not None:
                end = self.spans[end_node][1]
            self.spans[node] = (start, end)


class Positions:
    """Character offsets and line/column ranges of the nodes of one module, computed on demand."""

    def __init__(self, module: cst.Module, text: str, tree: ast.Module | None = None, facts: StatementFacts | None = None) -> None:
        self._module = module
        self._text = text
        # Without a final newline libcst generates one, ends the last statement
        # past it, then drops it: count lines as the generated text has them.
        self._generated = text if module.has_trailing_newline or not module.body else text + module.default_newline
        self._line_starts = line_starts(self._generated)
        self._spans: dict[cst.CSTNode, tuple[int, int]] = {}
        self._fallback: dict[cst.CSTNode, CodeRange] = {}
        self._whole_module = False
        self._statement_lines = _statement_lines(module, tree) if tree is not None else None
        self._facts = facts if facts is not None else StatementFacts()
        self._statement_of: dict[int, int | None] = {}  # id(node) -> index of its top-level statement, as asked
        self._last_statement = 0
        self._bases: dict[int, int] = {}  # index of a generated statement -> the offset it starts at
        self._failed_statements: set[int] = set()
        self._relative: dict[int, dict[cst.CSTNode, tuple[int, int]]] = {}

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        span = self._span(node)
        if span is not None:
            return span
        rng = self._fallback[node]
        return self._offset(rng.start), self._offset(rng.end)

    def range(self, node: cst.CSTNode) -> CodeRange:
        span = self._span(node)
        if span is None:
            return self._fallback[node]
        return CodeRange(self._position(span[0]), self._position(span[1]))

    def _span(self, node: cst.CSTNode) -> tuple[int, int] | None:
        if self._whole_module:
            return self._spans.get(node)
        index = self.statement_index(node)
        if index is not None and index not in self._failed_statements:
            base = self._bases.get(index)
            if base is None and self._generate_statement(index):
                base = self._bases[index]
            relative = self._relative[index].get(node) if base is not None else None
            if relative is not None:
                return relative[0] + base, relative[1] + base
        self._generate_module()
        return self._spans.get(node)

    def statement_index(self, node: cst.CSTNode) -> int | None:
        """The index of the top-level statement holding `node` (None: unknown, or not below one)."""
        if self._statement_lines is None:
            return None
        key = id(node)
        if key in self._statement_of:
            return self._statement_of[key]
        body = self._module.body
        found = None
        # Nodes asked about one after another tend to sit in the same statement.
        for index in (self._last_statement, *range(len(body))):
            if index < len(body) and self._facts.holds(body[index], node):
                found = self._last_statement = index
                break
        self._statement_of[key] = found
        return found

    def _generate_statement(self, index: int) -> bool:
        statement = self._module.body[index]
        lines = self._statement_lines
        assert lines is not None
        first_line = lines[index] - len(getattr(statement, "leading_lines", ()))
        if not 1 <= first_line <= len(self._line_starts):
            self._failed_statements.add(index)
            return False
        start = self._line_starts[first_line - 1]
        state = _OffsetState(default_indent=self._module.default_indent, default_newline=self._module.default_newline)
        code, spans = self._facts.generated(statement, state)
        if self._generated[start : start + len(code)] != code:
            self._failed_statements.add(index)
            return False  # not where the syntax tree said: trust only a whole-module pass
        self._bases[index] = start
        self._relative[index] = spans
        return True

    def _generate_module(self) -> None:
        self._whole_module = True
        state = _OffsetState(default_indent=self._module.default_indent, default_newline=self._module.default_newline)
        self._module._codegen(state)
        if state.offset == len(self._generated):
            self._spans = state.spans
        else:  # never seen; libcst's own provider is the reference
            self._spans = {}
            self._fallback = dict(MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider))

    def _position(self, offset: int) -> CodePosition:
        line = bisect.bisect_right(self._line_starts, offset)
        return CodePosition(line, offset - self._line_starts[line - 1])

    def _offset(self, position: CodePosition) -> int:
        return self._line_starts[position.line - 1] + position.column


def _statement_lines(module: cst.Module, tree: ast.Module) -> list[int] | None:
    """The line on which each top-level statement's own code starts (after its leading lines).

    libcst keeps `a = 1; b = 2` as one statement line where CPython has two
    statements; decorators start a definition. None when the two trees do not line up.
    """
    lines: list[int] = []
    body = tree.body
    at = 0
    for statement in module.body:
        if at >= len(body):
            return None
        first = body[at]
        decorators = getattr(first, "decorator_list", None)
        lines.append(min(d.lineno for d in decorators) if decorators else first.lineno)
        at += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return lines if at == len(body) else None
