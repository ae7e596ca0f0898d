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
    start, end = finding.start, finding.end
    if start.line != end.line:
        # GitHub's docs: columns only when the annotation starts and ends on one line.
        return f"line={start.line},endLine={end.line}"
    return f"line={start.line},col={start.column},endLine={end.line},endColumn={end.column}"


def render(findings: Sequence[Finding], options: "ReportOptions") -> str:
    return "".join(
        f"::error file={_escape_property(f.path)},{_location(f)},"
        f"title={f.code}::{_escape_data(f.code + ' ' + f.message)}\n"
        for f in findings
    )
