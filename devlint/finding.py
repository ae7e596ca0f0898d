"""What a rule reports: a finding at a span, with an optional fix."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


@dataclass(frozen=True)
class Edit:
    """Replace the source text between two offsets (0-based, end exclusive)."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    """Edits that repair one finding. Safe fixes keep behaviour wherever the code already works."""

    edits: tuple[Edit, ...]
    safe: bool
    title: str = ""


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    path: str
    start: Position
    end: Position
    fix: Fix | None = field(default=None, compare=False)

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.safe

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.start.line, self.start.column, self.code, self.message)
