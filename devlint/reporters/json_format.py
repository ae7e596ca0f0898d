"""One JSON array; lines and columns 1-based; paths as the user gave them."""

from __future__ import annotations

import json
from collections.abc import Sequence

from devlint.finding import Finding


def as_dict(finding: Finding) -> dict[str, object]:
    fix = finding.fix
    return {
        "code": finding.code,
        "message": finding.message,
        "path": finding.path,
        "line": finding.start.line,
        "column": finding.start.column,
        "end_line": finding.end.line,
        "end_column": finding.end.column,
        "fixable": finding.fixable,
        "fix": None
        if fix is None
        else {
            "applicability": "safe" if fix.safe else "unsafe",
            "title": fix.title,
            "edits": [{"start": e.start, "end": e.end, "replacement": e.replacement} for e in fix.edits],
        },
    }


def render(findings: Sequence[Finding], color: bool) -> str:
    return json.dumps([as_dict(f) for f in findings], indent=2) + "\n"
