"""What a rule reports: a finding at a span, with an optional fix."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


@dataclass(frozen=True)
class Edit:
    """Replace the source text between two offsets (0-based, end exclusive).

    Offsets count characters (code points) of the decoded text, after any BOM.
    The engine adds the same span as lines and columns for the reports.
    """

    start: int
    end: int
    replacement: str
    start_position: Position | None = field(default=None, compare=False)
    end_position: Position | None = field(default=None, compare=False)
    cell: int | None = field(default=None, compare=False)  # in a notebook: the cell the positions count in


@dataclass(frozen=True)
class Fix:
    """Edits that repair one finding. Safe fixes keep behaviour wherever the code already works."""

    edits: tuple[Edit, ...]
    safe: bool
    title: str = ""


@dataclass(frozen=True)
class Related:
    """A place the message names ("moved by `.cuda()`, line 62"), for editors to link to."""

    message: str
    start: Position
    end: Position


@dataclass(frozen=True)
class CellSpan:
    """Where a finding in a notebook is for the user: the cell (1-based, counting every cell,
    markdown too, as ruff numbers them), the span within it, and the same span in the
    notebook file's JSON text, for the reports that point into the file (SARIF, GitHub)."""

    cell: int
    start: Position
    end: Position
    file_start: Position
    file_end: Position


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    path: str
    start: Position
    end: Position
    fix: Fix | None = field(default=None, compare=False)
    related: tuple[Related, ...] = field(default=(), compare=False)
    # In a notebook, `start` and `end` count lines of its joined code cells; this says where the user looks.
    cell: CellSpan | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.safe

    @property
    def shown_start(self) -> Position:
        """The start as the user finds it: within its cell in a notebook."""
        return self.cell.start if self.cell is not None else self.start

    @property
    def shown_end(self) -> Position:
        return self.cell.end if self.cell is not None else self.end

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.start.line, self.start.column, self.code, self.message)


def with_edit_positions(findings: list[Finding], line_starts: list[int]) -> list[Finding]:
    """The findings with each fix edit's span also given as 1-based lines and columns."""
    import bisect
    from dataclasses import replace

    def position(offset: int) -> Position:
        index = bisect.bisect_right(line_starts, offset) - 1
        return Position(index + 1, offset - line_starts[index] + 1)

    out = []
    for finding in findings:
        fix = finding.fix
        if fix is not None and fix.edits and fix.edits[0].start_position is None:
            edits = tuple(replace(e, start_position=position(e.start), end_position=position(e.end)) for e in fix.edits)
            finding = replace(finding, fix=replace(fix, edits=edits))
        out.append(finding)
    return out
