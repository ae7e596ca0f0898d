"""Findings as LSP diagnostics: code, link to the rule's page, severity, related locations."""

from __future__ import annotations

from lsprotocol import types

from devlint.finding import Finding
from devlint.pages import page_url
from devlint.server.text_positions import TextLines

SOURCE = "devlint"
# DL000 (the file cannot be read or parsed) and DL999 (devlint failed) are about
# the file as a whole; the other findings are warnings about code that runs here.
_ERROR_CODES = frozenset({"DL000", "DL999"})


def diagnostic(finding: Finding, lines: TextLines, uri: str) -> types.Diagnostic:
    severity = types.DiagnosticSeverity.Error if finding.code in _ERROR_CODES else types.DiagnosticSeverity.Warning
    return types.Diagnostic(
        range=lines.range(finding.start, finding.end),
        message=finding.message,
        severity=severity,
        code=finding.code,
        code_description=types.CodeDescription(href=page_url(finding.code)),
        source=SOURCE,
        related_information=[
            types.DiagnosticRelatedInformation(types.Location(uri, lines.range(r.start, r.end)), r.message) for r in finding.related
        ]
        or None,
    )
