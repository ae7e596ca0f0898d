"""One JSON array; lines and columns 1-based; paths as the user gave them.

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
    return {"content": edit.replacement, "location": _location(edit.start_position), "end_location": _location(edit.end_position)}


def as_dict(finding: Finding, options: "ReportOptions") -> dict[str, object]:
    fix = finding.fix
    return {
        "code": finding.code,
        "message": finding.message,
        "path": finding.path,
        "line": finding.start.line,
        "column": finding.start.column,
        "end_line": finding.end.line,
        "end_column": finding.end.column,
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
