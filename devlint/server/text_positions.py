"""Positions in a document as LSP counts them: 0-based lines, columns in the client's code units.

devlint counts columns in characters (code points), 1-based; LSP counts
UTF-16 code units by default (UTF-8 or UTF-32 where both sides agree). Lines
end at `\\n`, `\\r\\n` or `\\r` only, as in Python and LSP: `str.splitlines`
would also break at form feeds and other separators and shift every line after.
"""

from __future__ import annotations

import bisect

from lsprotocol import types

from devlint.finding import Position
from devlint.positions import line_starts

_UNIT_WIDTH = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}
_UNIT_SIZE = {"utf-8": 1, "utf-16": 2, "utf-32": 4}


class TextLines:
    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self._starts = line_starts(text)
        self._codec = _UNIT_WIDTH.get(encoding, "utf-16-le")
        self._unit = _UNIT_SIZE.get(encoding, 2)

    def _units(self, chars: str) -> int:
        if chars.isascii():
            return len(chars)
        return len(chars.encode(self._codec, "surrogatepass")) // self._unit

    def line_text(self, line: int) -> str:
        """Line `line` (0-based) without its line break."""
        start = self._starts[line]
        end = self._starts[line + 1] if line + 1 < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def at_offset(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        return types.Position(line, self._units(self.text[self._starts[line] : offset]))

    def at(self, position: Position) -> types.Position:
        """A finding's 1-based (line, column in characters) as an LSP position."""
        line = position.line - 1
        if line >= len(self._starts):
            return types.Position(len(self._starts) - 1, self._units(self.line_text(len(self._starts) - 1)))
        start = self._starts[line]
        return self.at_offset(min(start + position.column - 1, start + len(self.line_text(line))))

    def range(self, start: Position, end: Position) -> types.Range:
        return types.Range(self.at(start), self.at(end))

    def offset(self, position: types.Position) -> int:
        """The character offset of an LSP position (clamped to the text)."""
        if position.line >= len(self._starts):
            return len(self.text)
        line = self.line_text(position.line)
        units = 0
        for index, char in enumerate(line):
            if units >= position.character:
                return self._starts[position.line] + index
            units += self._units(char)
        return self._starts[position.line] + len(line)
