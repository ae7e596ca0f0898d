"""Where nodes lie in the text, at a fraction of libcst's PositionProvider cost.

PositionProvider builds a CodePosition per node from a regex split of every
token, and MetadataWrapper adds a full visit of its own: on a 500 kB file the
two took 2.5 times as long as the parse. The code generation underneath is
cheap, so this tracks one character offset, keeps plain (start, end) offsets
per node, and turns offsets into lines and columns only for the nodes asked
about. The ranges are PositionProvider's: syntactic where a node records one,
whitespace-inclusive otherwise.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst counts as a line break


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
    """Character offsets and line/column ranges of every node of one module."""

    def __init__(self, module: cst.Module, text: str) -> None:
        self._text = text
        state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline)
        module._codegen(state)
        self._spans = state.spans
        # Without a final newline libcst generates one, ends the last statement
        # past it, then drops it: count lines as the generated text has them.
        generated = text if module.has_trailing_newline or not module.body else text + module.default_newline
        self._line_starts = [0] + [match.end() for match in _NEWLINE.finditer(generated)]
        if state.offset != len(generated):  # never seen; libcst's own provider is the reference
            self._spans = {}
            self._fallback = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
        else:
            self._fallback = {}

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        span = self._spans.get(node)
        if span is not None:
            return span
        rng = self._fallback[node]
        return self._offset(rng.start), self._offset(rng.end)

    def range(self, node: cst.CSTNode) -> CodeRange:
        span = self._spans.get(node)
        if span is None:
            return self._fallback[node]
        return CodeRange(self._position(span[0]), self._position(span[1]))

    def _position(self, offset: int) -> CodePosition:
        line = bisect.bisect_right(self._line_starts, offset)
        return CodePosition(line, offset - self._line_starts[line - 1])

    def _offset(self, position: CodePosition) -> int:
        return self._line_starts[position.line - 1] + position.column
