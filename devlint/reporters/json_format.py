"""One JSON array; lines and columns 1-based; paths as the user gave them.

A finding in a notebook also has `cell` (1-based, counting every cell), and its
lines count within that cell; so do its fix edits', each edit naming its cell.

Fix edits are located as ruff's JSON locates them: `location` and
`end_location`, each a 1-based `row` and `column` (columns count characters,
as the findings' own do), and the `content` that replaces the span.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from devlint.finding import Edit, Finding, Position

if TYPE_CHECKING:
    from devlint.reporters.options import ReportOptions


def _location(position: Position | None) -> dict[str, int] | None:
    return None if position is None else {"row": position.line, "column": position.column}


def _edit(edit: Edit) -> dict[str, object]:
    out: dict[str, object] = {"content": edit.replacement, "location": _location(edit.start_position), "end_location": _location(edit.end_position)}
    if edit.cell is not None:
        out["cell"] = edit.cell  # a notebook's edit: rows count within this cell
    return out


def as_dict(finding: Finding, options: "ReportOptions") -> dict[str, object]:
    fix = finding.fix
    start, end = finding.shown_start, finding.shown_end
    out: dict[str, object] = {
        "code": finding.code,
        "message": finding.message,
        "path": finding.path,
    }
    if finding.cell is not None:
        out["cell"] = finding.cell.cell  # a notebook: lines count within this cell, as ruff's `cell`
    return out | {
        "line": start.line,
        "column": start.column,
        "end_line": end.line,
        "end_column": end.column,
        "fixable": options.applies(finding),
        "fix": None
        if fix is None
        else {
            "applicability": "safe" if fix.safe else "unsafe",
            "title": fix.title,
            "edits": [_edit(e) for e in fix.edits],
        },
    }


def render(findings: Sequence[Finding], options: "ReportOptions") -> str:
    return json.dumps([as_dict(f, options) for f in findings], indent=2) + "\n"
