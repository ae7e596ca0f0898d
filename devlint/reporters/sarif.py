"""SARIF 2.1.0, as GitHub code scanning accepts it and as the OASIS schema states it.

Locations are URIs (RFC 3986, percent-encoded) relative to `%SRCROOT%`, the
working folder, which `originalUriBaseIds` states; a file outside it gets an
absolute `file://` URI. Columns count Unicode code points (`columnKind`), as
the other formats' do. Fixes go in each result's `fixes`. A notebook's findings
point into its JSON text (the line that holds the code), with the cell named.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from devlint import __version__
from devlint.finding import Finding, Fix

if TYPE_CHECKING:
    from devlint.reporters.options import ReportOptions

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"
_HELP_BASE = "https://github.com/devlint/devlint/blob/main/rules/"


def _file_uri(absolute: str) -> str:
    return "file://" + quote(Path(absolute).as_posix(), safe="/")


def artifact_location(path: str, root: str) -> dict[str, str]:
    """A file as SARIF names it: relative to `root` under `%SRCROOT%` when it lies there."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, root)
    if relative == os.curdir or relative.startswith(os.pardir + os.sep) or relative == os.pardir or os.path.isabs(relative):
        return {"uri": _file_uri(absolute)}
    # quote() encodes everything outside RFC 3986's unreserved set but "/": a space,
    # "%", ":" (which would read as a scheme in a relative reference), non-ASCII as UTF-8.
    return {"uri": quote(Path(relative).as_posix(), safe="/"), "uriBaseId": SOURCE_ROOT}


def _region(start_line: int, start_column: int, end_line: int, end_column: int) -> dict[str, int]:
    return {"startLine": start_line, "startColumn": start_column, "endLine": end_line, "endColumn": end_column}


def _fix(fix: Fix, location: dict[str, str]) -> dict[str, object] | None:
    replacements = []
    for edit in fix.edits:
        if edit.start_position is None or edit.end_position is None:
            return None
        start, end = edit.start_position, edit.end_position
        replacements.append(
            {
                "deletedRegion": _region(start.line, start.column, end.line, end.column),
                "insertedContent": {"text": edit.replacement},
            }
        )
    if not replacements:
        return None
    return {
        "description": {"text": fix.title or "Apply devlint's fix"},
        "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
        "properties": {"applicability": "safe" if fix.safe else "unsafe"},
    }


def render(findings: Sequence[Finding], options: "ReportOptions") -> str:
    from devlint.pages import rule_page
    from devlint.rules import all_infos

    root = os.getcwd()
    infos = all_infos()
    index = {info.code: i for i, info in enumerate(infos)}
    rules = []
    for info in infos:
        page = rule_page(info.code) or info.summary
        rules.append(
            {
                "id": info.code,
                "name": info.name,
                "shortDescription": {"text": info.summary},
                "fullDescription": {"text": info.summary},
                "helpUri": f"{_HELP_BASE}{info.code}.md",
                "help": {"text": page, "markdown": page},
                "defaultConfiguration": {"level": "error" if info.default_enabled else "none"},
            }
        )
    results = []
    for f in findings:
        location = artifact_location(f.path, root)
        # A notebook's region is in the file's JSON text, where code scanning shows it; the cell
        # and the line within it go in the message and the properties.
        start, end = (f.cell.file_start, f.cell.file_end) if f.cell is not None else (f.start, f.end)
        message = f.message if f.cell is None else f"cell {f.cell.cell}, line {f.cell.start.line}: {f.message}"
        result: dict[str, object] = {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, 0),
            "level": "error",
            "message": {"text": message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": location,
                        "region": _region(start.line, start.column, end.line, end.column),
                    }
                }
            ],
        }
        if f.cell is not None:
            result["properties"] = {"cell": f.cell.cell, "cellLine": f.cell.start.line, "cellColumn": f.cell.start.column}
        # A notebook's fix would replace escaped JSON text: left to `devlint check --fix`.
        fix = _fix(f.fix, location) if f.fix is not None and f.cell is None else None
        if fix is not None:
            result["fixes"] = [fix]
        results.append(result)
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "devlint",
                        "version": __version__,
                        "informationUri": "https://github.com/devlint/devlint",
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SOURCE_ROOT: {"uri": _file_uri(root).rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"
