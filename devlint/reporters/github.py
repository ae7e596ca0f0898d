"""GitHub Actions workflow commands: annotations on the pull request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from devlint.finding import Finding

if TYPE_CHECKING:
    from devlint.reporters.options import ReportOptions


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _location(finding: Finding) -> str:
    # A notebook's annotation goes on the line of the file's JSON text that holds the code:
    # that is the line GitHub shows (a cell-relative line would land on unrelated JSON).
    start, end = (finding.cell.file_start, finding.cell.file_end) if finding.cell is not None else (finding.start, finding.end)
    if start.line != end.line:
        # GitHub's docs: columns only when the annotation starts and ends on one line.
        return f"line={start.line},endLine={end.line}"
    return f"line={start.line},col={start.column},endLine={end.line},endColumn={end.column}"


def _text(finding: Finding) -> str:
    if finding.cell is None:
        return f"{finding.code} {finding.message}"
    start = finding.cell.start
    return f"{finding.code} cell {finding.cell.cell}, line {start.line}, column {start.column}: {finding.message}"


def render(findings: Sequence[Finding], options: "ReportOptions") -> str:
    return "".join(
        f"::error file={_escape_property(f.path)},{_location(f)},"
        f"title={f.code}::{_escape_data(_text(f))}\n"
        for f in findings
    )
