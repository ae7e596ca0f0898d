"""GitHub Actions workflow commands: annotations on the pull request."""

from __future__ import annotations

from collections.abc import Sequence

from devlint.finding import Finding


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(findings: Sequence[Finding], color: bool) -> str:
    return "".join(
        f"::error file={_escape_property(f.path)},line={f.start.line},col={f.start.column},"
        f"endLine={f.end.line},endColumn={f.end.column},title={f.code}::{_escape_data(f.code + ' ' + f.message)}\n"
        for f in findings
    )
